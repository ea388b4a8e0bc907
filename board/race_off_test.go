//go:build !race

package board_test

// raceDetector: see race_on_test.go.
const raceDetector = false
