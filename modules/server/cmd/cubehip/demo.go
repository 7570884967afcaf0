package main

import (
	"errors"
	"io"
)

func runDemo(out io.Writer, args []string) error { return errors.New("demo: not written yet") }
