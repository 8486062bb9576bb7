/* tokentext.h -- the readable text of a trace's tokens, for the token strip, axis labels and words.
 *
 * Vocabulary strings are turned back into readable text as the trace's tokenizer writes them
 * (trace->pieces; guessed from the pieces when the trace does not say). GPT-2's byte-level
 * alphabet is decoded ('Ġ' is a space, other bytes become the UTF-8 they encode), WordPiece's
 * "##" and BPE's missing leading space mark a piece that continues the previous word.
 * SentencePiece pieces (Llama 2, Mistral, Gemma, XLM-R, ALBERT) are read the same way with '▁'
 * as the space, and their byte-fallback pieces (<0xE6><0x9D><0xB1>) show the character they
 * encode on the first of them. Spaces other than the one starting a word are shown as '␣'.
 * Pure over the trace: no drawing. */
#ifndef ATTNSCOPE_TOKENTEXT_H
#define ATTNSCOPE_TOKENTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace.h"

/* Readable text of token I of T into BUF (no "##", no 'Ġ'); *CONT is set when the token continues
 * the previous word. Newlines and tabs become visible glyphs ('↵', '→'); undecodable bytes <xx>.
 * A special token, and a token of a trace of words, is its string as it is. */
void tokentext_text(const struct trace *t, int i, char *buf, size_t n, bool *cont);

#endif
