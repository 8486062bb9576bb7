/* jsonout.c -- writing JSON strings and the "model" object by hand (see jsonout.h). */
#include "base/jsonout.h"

#include <string.h>

#include "base/utf8.h"

void jsonout_string(FILE *out, const char *s)
{
	size_t len = strlen(s);
	fputc('"', out);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80) { /* a well-formed sequence as is, else one replacement per byte */
			size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			if (n <= len - i && utf8_check(s + i, n) == n) {
				fwrite(s + i, 1, n, out);
				i += n;
			} else {
				fputs("\\ufffd", out);
				i++;
			}
			continue;
		}
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
		i++;
	}
	fputc('"', out);
}

void jsonout_model(FILE *out, const struct jsonout_model *m)
{
	fputs("{\"name\": ", out);
	jsonout_string(out, m->name);
	fputs(", \"family\": ", out);
	jsonout_string(out, m->family);
	fprintf(out,
		", \"causal\": %s, \"layers\": %d, \"heads\": %d, \"kv_heads\": %d, \"head_dim\": %d, \"hidden\": %d, "
		"\"max_positions\": %d",
		m->causal ? "true" : "false", m->layers, m->heads, m->kv_heads, m->head_dim, m->hidden, m->max_positions);
}
