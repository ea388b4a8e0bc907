package board

// WaitDeliveredMarksForTest returns when the delivered marks of the
// decisions sent so far are written.
func (b *Board) WaitDeliveredMarksForTest() { b.deliveries.marks.wait() }
