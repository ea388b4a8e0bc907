//go:build race

package board_test

// raceDetector: the tests run under the race detector, which makes code
// several times slower and its memory larger, so figures of time and
// memory mean nothing.
const raceDetector = true
