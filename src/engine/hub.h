/* hub.h -- find a model folder from what the user typed: a path, a bundled model name, or a name
 * in the Hugging Face cache (models--ORG--NAME/snapshots/<hash>, chosen via refs/main). No network. */
#ifndef ATTNSCOPE_HUB_H
#define ATTNSCOPE_HUB_H

#include <stddef.h>

#include "base/err.h"

/* Write the folder holding config.json for NAME_OR_DIR into OUT (size OUTSZ). */
int hub_resolve(const char *name_or_dir, char *out, size_t outsz, struct err *e);

/* The Hugging Face hub cache directory: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub. */
void hub_cache_dir(char *out, size_t outsz);

#endif
