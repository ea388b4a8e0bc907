package main

import (
	"slices"
	"strconv"
	"testing"
)

// TestReadPages: a list is read page by page, each no larger than asked,
// until the limit or the last page; more says whether there was more.
func TestReadPages(t *testing.T) {
	all := []int{1, 2, 3, 4, 5, 6, 7}
	// page serves all in pages of at most 3 (and of what was asked, if less).
	page := func(asked *[]int32) func(int32, string) ([]int, string, error) {
		return func(size int32, token string) ([]int, string, error) {
			*asked = append(*asked, size)
			from := 0
			if token != "" {
				from, _ = strconv.Atoi(token)
			}
			to := min(from+int(min(size, 3)), len(all))
			next := ""
			if to < len(all) {
				next = strconv.Itoa(to)
			}
			return all[from:to], next, nil
		}
	}
	for _, c := range []struct {
		limit, most int
		want        []int
		more        bool
		asked       []int32
	}{
		{limit: 100, most: 1000, want: all, asked: []int32{100, 97, 94}},
		{limit: 7, most: 1000, want: all, asked: []int32{7, 4, 1}},
		{limit: 5, most: 2, want: all[:5], more: true, asked: []int32{2, 2, 1}},
		{limit: 3, most: 1000, want: all[:3], more: true, asked: []int32{3}},
	} {
		var asked []int32
		got, more, err := readPages(c.limit, c.most, page(&asked))
		if err != nil || !slices.Equal(got, c.want) || more != c.more || !slices.Equal(asked, c.asked) {
			t.Errorf("readPages(limit %d, most %d) = %v, more %v, %v, asking for %v; want %v, more %v, asking for %v",
				c.limit, c.most, got, more, err, asked, c.want, c.more, c.asked)
		}
	}
}
