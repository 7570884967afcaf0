// The fake nvrtcAddNameExpression and nvrtcGetLoweredName: a program's expressions are
// recorded, and each one's lowered name is "lowered:" followed by it, so a test sees that
// the expression reached NVRTC as given and the name came back from it.
#include <stdlib.h>
#include <string.h>

#include "rawdriver.h"

#define FAKE_NAMES 32

static struct {
	void* prog;
	char* expr;
	char* lowered;
} fake_names[FAKE_NAMES];
static int fake_nnames;

static int fake_add_name(void* prog, const char* expr) {
	if (!expr) return 3;                       // NVRTC_ERROR_INVALID_INPUT
	if (fake_nnames == FAKE_NAMES) return 1;   // NVRTC_ERROR_OUT_OF_MEMORY
	size_t n = strlen(expr);
	char* lowered = malloc(n + sizeof "lowered:");
	if (!lowered) return 1;
	memcpy(lowered, "lowered:", sizeof "lowered:" - 1);
	memcpy(lowered + sizeof "lowered:" - 1, expr, n + 1);
	fake_names[fake_nnames].prog = prog;
	fake_names[fake_nnames].expr = strdup(expr);
	fake_names[fake_nnames].lowered = lowered;
	fake_nnames++;
	return 0;
}

static int fake_lowered(void* prog, const char* expr, const char** out) {
	for (int i = 0; i < fake_nnames; i++)
		if (fake_names[i].prog == prog && strcmp(fake_names[i].expr, expr) == 0) {
			*out = fake_names[i].lowered;
			return 0;
		}
	return 10; // NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID
}

void* rawd_fake_add_name_entry(void) { return (void*)fake_add_name; }
void* rawd_fake_lowered_entry(void) { return (void*)fake_lowered; }

void rawd_fake_names_reset(void) {
	for (int i = 0; i < fake_nnames; i++) {
		free(fake_names[i].expr);
		free(fake_names[i].lowered);
	}
	fake_nnames = 0;
}
