package compute

import (
	"log/slog"
	"os"
	"strings"
	"sync"
)

// EnvLog names the environment variable that sets the level of the default logger:
// debug, info, warn (the default) or error. A server given WithLogger ignores it.
const EnvLog = "CUBEHIP_LOG"

// defaultLogger writes to stderr at $CUBEHIP_LOG's level. Warn is the default because
// what the server logs at info (cache hits, pool growth) is noise to most programs,
// while a warning (a refused capture, a corrupt cache entry) is something to act on.
// Built once: every server of the process shares it.
var defaultLogger = sync.OnceValue(func() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(os.Getenv(EnvLog))}))
})

// logLevel reads a $CUBEHIP_LOG value; anything unknown is the default, warn, rather
// than an error: a typo in a log setting must not stop a program from running.
func logLevel(s string) slog.Level {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	case "error":
		return slog.LevelError
	}
	return slog.LevelWarn
}
