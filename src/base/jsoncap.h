/* jsoncap.h -- a bound on what parsing untrusted JSON may allocate, checked before jansson runs.
 *
 * jansson allocates a node (40-70 bytes with malloc's overhead) per value and per object key,
 * so 100 MB of "[0,0,0,..." takes 2 GB and a 200 MB config.json 4 GB. One cheap pass over the
 * text bounds the number of nodes; callers refuse texts past JSONCAP_MAX_NODES, which keeps a
 * parse under ~300 MB while leaving room for the largest real files (a 250k-token
 * tokenizer.json has ~1.3M nodes, a safetensors header ~15 per tensor). */
#ifndef ATTNSCOPE_JSONCAP_H
#define ATTNSCOPE_JSONCAP_H

#include <jansson.h>
#include <stddef.h>

#include "base/err.h"

#define JSONCAP_MAX_NODES ((size_t)4 << 20)
#define JSONCAP_MAX_FILE ((size_t)64 << 20) /* config.json and shard indexes are far smaller */

/* An upper bound on the values and object keys in the JSON text S[0..LEN): every one but the
 * first follows a ',', ':', '[' or '{' outside strings. Holds for invalid text too, since the
 * parser reads a prefix of it with the same idea of where strings end. */
size_t jsoncap_nodes(const char *s, size_t len);

/* Parse the JSON file PATH (jansson FLAGS) after checking it is a regular file (file_read_all)
 * of at most JSONCAP_MAX_FILE bytes and JSONCAP_MAX_NODES nodes. On failure NULL: for a JSON
 * syntax error E->msg is "" and *JE says where, otherwise E holds "PATH: problem" (file.h's
 * messages, or "more than N JSON values"). */
json_t *jsoncap_load_file(const char *path, size_t flags, json_error_t *je, struct err *e);

#endif
