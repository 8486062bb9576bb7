/* hfconfig.h -- read config.json and pick values by the candidate keys a family description lists. */
#ifndef ATTNSCOPE_HFCONFIG_H
#define ATTNSCOPE_HFCONFIG_H

#include <limits.h>
#include <stdbool.h>

#include "base/err.h"
#include "engine/family.h"

struct hfconfig {
	char path[PATH_MAX];
	void *root;            /* json_t * (kept opaque so users need not include jansson) */
	char model_type[48];
};

int hfconfig_load(const char *dir, struct hfconfig *c, struct err *e);
void hfconfig_free(struct hfconfig *c);

/* Integer setting S in [LO, HI]: from the family's keys, else its default. Null/absent with no
 * default is an error naming the key. */
int hfconfig_int(const struct hfconfig *c, const struct family *f, enum family_setting s, long lo, long hi,
		 long *out, struct err *e);
/* Same for a float, a string (copied into OUT) and a boolean. *PRESENT tells whether a key was found. */
int hfconfig_float(const struct hfconfig *c, const struct family *f, enum family_setting s, double *out,
		   struct err *e);
int hfconfig_string(const struct hfconfig *c, const struct family *f, enum family_setting s, char *out,
		    size_t outsz, struct err *e);
int hfconfig_bool(const struct hfconfig *c, const struct family *f, enum family_setting s, bool *out,
		  struct err *e);
/* The raw value (a json_t *) of setting S, or NULL when absent or null (no default applies). */
const void *hfconfig_json(const struct hfconfig *c, const struct family *f, enum family_setting s);
/* True when setting S has a non-null value in config.json. */
bool hfconfig_has(const struct hfconfig *c, const struct family *f, enum family_setting s);

#endif
