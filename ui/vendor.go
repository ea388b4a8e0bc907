package ui

// The web board's one third-party script, uPlot (MIT; the dashboard's
// charts), is committed in static/vendor/, taken from the npm registry by
// vendor_uplot.go at the exact version and integrity it pins: run
//
//	go generate ./ui
//
// (part of go generate ./..., which CI checks leaves no difference).

//go:generate go run vendor_uplot.go
