#!/bin/sh
# tui-analysis.sh -- the real binary under tmux reaches every analysis view by its key from the
# grid (and from another analysis view), sees it drawn, and each follows the shared selection:
# layer and head keys change what the view shows, the selected token is the one it analyses, and
# the head finder's Enter opens the chosen head's heatmap. The view-specific toggles (sort,
# normalisation, head switch, first token, mark B) change the screen, and v switches each of the
# four notebook-following views between the notebook's samples and attnscope's. Also: the help screen
# lists a view's own keys, and q returns to where the view was opened from.
set -u
: "${top_srcdir:?}" "${ATTNSCOPE_BIN:?}"
. "$top_srcdir/tests/ui/lib.sh"
BERT="$top_srcdir/tests/data/models/bert-mini"
GPT2="$top_srcdir/tests/data/models/gpt2-mini"
[ -f "$BERT/config.json" ] && [ -f "$GPT2/config.json" ] || { echo "fixture models missing"; exit 77; }
U8="LC_ALL=C.UTF-8"
TEXT="The cat sat on the mat. The cat sat on the hat."

tui_start 120 40 $U8 "$ATTNSCOPE_BIN" -m "$GPT2" "$TEXT"
tui_wait "3 layers × 2 heads"

# Head finder: sortable, follows the selection, Enter opens the heatmap of the head under the cursor.
tui_keys F
tui_wait "head finder · 6 heads · sorted by layer/head"
tui_screen | grep -q "induction" || tui_fail "no induction column for a causal model"
tui_keys l
tui_wait "sorted by prev, largest first"
tui_keys r
tui_wait "sorted by prev, smallest first"
tui_keys h
tui_wait "sorted by layer/head"
tui_keys j j j
tui_wait "│ L1 H1 │ heads"
tui_keys Enter
tui_wait "layer 1 head 1 · queries"
tui_keys q
tui_wait "head finder"

# Query/key geometry of the selected head; the normalisation cycles; [ ] change the head.
tui_keys K
tui_wait "query/key geometry · layer 1 head 1"
tui_wait "normalised: no"
tui_screen | grep -q "● query  ◆ key" || tui_fail "qk legend"
tui_keys z
tui_wait "normalised: equal mean norms"
tui_keys z
tui_wait "normalised: distance tracks dot product"
tui_wait "best-correlation c ="
tui_keys '['
tui_wait "query/key geometry · layer 1 head 0"
tui_keys .
tui_wait "the selected token is highlighted"

# The help screen lists the view's own keys.
tui_keys '?'
tui_wait "Query/key geometry"
tui_wait "cycle the normalisation of the vectors"
tui_keys q
tui_wait "query/key geometry · layer 1 head 0"

# Rollout follows the layer and the selected token.
tui_keys R
tui_wait "attention rollout through layers 0-1"
tui_wait "position 0 The draws on"
tui_keys '}'
tui_wait "attention rollout through layers 0-2"
tui_keys j j
tui_wait "position 2 sat draws on"

# Head view: token 2, heads switched off and on, given/received.
tui_keys V
tui_wait "head view · layer 2 · attention given by sat (token 2) · 2 of 2 heads on"
tui_keys t
tui_wait "1 of 2 heads on"
tui_keys t
tui_wait "2 of 2 heads on"
tui_keys r
tui_wait "attention received by sat"

# Neuron view: the selected query token and head.
tui_keys N
tui_wait "neuron view · layer 2 head 0 · query sat (token 2)"
tui_screen | grep -q "masked" || tui_fail "a causal query's later keys are not marked masked"
tui_keys j
tui_wait "query on (token 3)"

# Attention in vector space: A is the selected token, b marks B, small multiples for every layer.
tui_keys A
tui_wait "attention rows as vectors · layer 2, mean of 2 heads"
tui_wait "A = on (3)"
tui_wait "notebook 000: specials dropped, rows not renormalised · xy / Frobenius norm"
tui_wait "every layer: A and B scaled to 1 in its PCA plane, projection (A·B)B"
tui_keys v
tui_wait "attnscope: every token (s hides specials) · xy as PCA gives them · 14 rows"
tui_wait "every layer: B along x, projection (A·B/|B|²)B"
tui_keys v
tui_wait "notebook 000: specials dropped"
tui_keys k k b
tui_wait "B = token 1"
tui_keys j j
tui_wait "A = on (3) onto B = cat (1)"
tui_wait "L0 coef"
tui_wait "L2 coef"
tui_keys m
tui_wait "layer 2, head 0"
tui_keys z
tui_wait "unit-length rows"

# Per-head statistics, products, distributions.
tui_keys D
tui_wait "query/key statistics · layer 2"
tui_wait "first token left out"
tui_wait "notebook 004: std over n-1, Bessel (torch's std()) · n 52 per mean: tokens 1…13 × 4 dims"
tui_keys t
tui_wait "first token included"
tui_wait "n 56 per mean: tokens 0…13"
tui_keys v
tui_wait "attnscope: std over n, the population's"
tui_keys X
tui_wait "products · layer 2 · query on (token 3)"
tui_wait "same head (what attention uses)"
tui_wait "notebook 004: keys 1…2 (2 keys) = those it sees but the first token"
tui_wait "curve: Gaussian KDE, Scott h"
tui_keys v
tui_wait "attnscope: keys 0…3 (4 keys) = every key the query sees"
tui_wait "n 8  mean"
tui_keys W
tui_wait "attention weight distributions · layer 2 · pooled over 2 heads"
tui_wait "notebook 004: a[13][0…12] · a[i][i] for i = 1…13 (the last token included)"
tui_wait "no density: all values equal"
tui_keys v
tui_wait "a[i][i] for i = 1…12 (the last token left out)"
tui_keys '{'
tui_wait "attention weight distributions · layer 1"

# Keys of a view that does not handle them say so; q goes back through the views opened.
tui_keys z
tui_wait "normalise: not in the softmax view"
tui_keys F
tui_wait "head finder"
tui_keys q
tui_wait "3 layers × 2 heads"
tui_keys q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"

# A bidirectional model: [CLS]/[SEP] columns, no duplicate/induction columns.
tui_start 120 40 $U8 "$ATTNSCOPE_BIN" -m "$BERT" "$TEXT"
tui_wait "3 layers × 2 heads"
tui_keys F
tui_wait "head finder"
tui_screen | grep -q "  sep " || tui_fail "no sep column for BERT"
tui_screen | grep -q "induction" && tui_fail "an induction column for BERT"
tui_keys N
tui_wait "neuron view"
tui_screen | grep -q "masked" && tui_fail "masked keys in a bidirectional model"
tui_keys Q
st=$(tui_exit_status); [ "$st" = 0 ] || tui_fail "exit status $st"
echo ok
