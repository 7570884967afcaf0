package main

import (
	"errors"
	"io"
)

func runBench(out io.Writer, args []string) error { return errors.New("bench: not written yet") }
