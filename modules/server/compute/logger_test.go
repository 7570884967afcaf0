package compute

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLogLevelFromEnvValue(t *testing.T) {
	for in, want := range map[string]slog.Level{
		"": slog.LevelWarn, "debug": slog.LevelDebug, " INFO ": slog.LevelInfo,
		"warn": slog.LevelWarn, "error": slog.LevelError, "verbose": slog.LevelWarn,
	} {
		assert.Equal(t, want, logLevel(in), "CUBEHIP_LOG=%q", in)
	}
}
