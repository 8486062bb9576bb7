#!/bin/sh
# layers.sh -- the house by layers (README, "Layout"): src/ holds one folder per layer and no source
# at its top; a file calls (and includes) only files of its own folder or of the folders below it, in
# the order LAYERS gives (bottom first); and no two files call each other, directly or around a loop.
#
# Calls are read from the built objects as the linker sees them: each object's undefined symbols
# (nm) resolved to the object that defines them. Includes are read from the sources. A family's name
# may appear as a C string only in the family parser (src/engine/family.c): the rest of the code
# reads a family's switches, never its name.
set -u
top=${top_srcdir:?}
build=${top_builddir:-$(dirname "${ATTNSCOPE_BIN:?}")}
layers=${LAYERS:-"base tokenizer trace engine analysis corpus draw views tui cli"}
work=$(mktemp -d) || exit 99
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# rank FOLDER: its place in the order (0 = bottom), or nothing when it is not a layer
rank() {
	i=0
	for l in $layers; do
		[ "$l" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
}

# 1. One folder per layer, nothing at the top of src/.
for f in "$top"/src/*; do
	case "$f" in
	*.c | *.h | *.cc) bad "src/$(basename "$f") lies at the top of src/, outside every layer" ;;
	esac
	[ -d "$f" ] && [ -z "$(rank "$(basename "$f")")" ] && bad "src/$(basename "$f")/ is not a layer (LAYERS: $layers)"
done

# 2. Includes go down or sideways.
for l in $layers; do
	r=$(rank "$l")
	for f in "$top"/src/"$l"/*.c "$top"/src/"$l"/*.h "$top"/src/"$l"/*.cc; do
		[ -f "$f" ] || continue
		for inc in $(sed -n 's/^#include "\([a-z]*\)\/[^"]*".*/\1/p' "$f" | sort -u); do
			ri=$(rank "$inc")
			if [ -z "$ri" ]; then
				bad "src/$l/$(basename "$f") includes from $inc/, which is not a layer"
			elif [ "$ri" -gt "$r" ]; then
				bad "src/$l/$(basename "$f") includes $(grep -o "\"$inc/[^\"]*\"" "$f" | head -n1) from a layer above it"
			fi
		done
	done
done

# 3. Calls, from the objects: "file folder symbol" for what each defines and what it needs.
n_obj=0
for l in $layers; do
	for o in "$build"/src/"$l"/*.o; do
		[ -f "$o" ] || continue
		n_obj=$((n_obj + 1))
		# automake names an object TARGET-FILE.o when the target has its own flags
		file=$(basename "$o" .o)
		case "$file" in *_a-* | attnscope-*) file=${file#*-} ;; esac
		nm "$o" | awk -v f="$file" -v l="$l" '
			NF == 3 && $2 ~ /^[TDBRVWG]$/ { print "def", f, l, $3 }
			NF == 2 && $1 == "U" { print "use", f, l, $2 }'
	done
done >"$work/syms"
[ "$n_obj" -gt 0 ] || { echo "layers.sh: no objects under $build/src/*/ (build first)"; exit 99; }
awk -v order="$layers" '
	BEGIN { n = split(order, o, " "); for (i = 1; i <= n; i++) rank[o[i]] = i }
	FNR == NR { if ($1 == "def") { file[$4] = $2; layer[$4] = $3 } next }
	$1 == "use" && ($4 in file) && file[$4] != $2 {
		print $2, file[$4] > "'"$work/edges"'"
		if (rank[layer[$4]] > rank[$3])
			printf "FAIL: src/%s/%s calls %s of src/%s/%s, a layer above it\n", $3, $2, $4, layer[$4], file[$4]
	}' "$work/syms" "$work/syms" >"$work/up"
[ -s "$work/up" ] && { cat "$work/up"; fail=1; }
touch "$work/edges"
sort -u "$work/edges" >"$work/edges.u"
n_edges=$(wc -l <"$work/edges.u")
if ! tsort "$work/edges.u" >/dev/null 2>"$work/loop"; then
	bad "files that call each other, around these loops:"
	awk '/input contains a loop/ { if (l != "") print "    " l; l = ""; next }
	     { sub(/^tsort: /, ""); l = l == "" ? $0 : l " -> " $0 }
	     END { if (l != "") print "    " l }' "$work/loop"
fi

# 4. Family names only in the family parser.
for y in "$top"/models/families/*.yaml; do
	name=$(basename "$y" .yaml)
	# as a string in code, not in a comment (/* ... "gpt2" ... */ names an example)
	hits=$(grep -rn --include=*.c --include=*.h --include=*.cc "\"$name\"" "$top/src" | grep -v "^$top/src/engine/family\.c:" |
		awk -v q="\"$name\"" '{ c = index($0, "/*"); s = index($0, q); t = $0; sub(/^[^:]*:[0-9]*:[ \t]*/, "", t)
			if (t !~ /^\*/ && (c == 0 || c > s)) print }')
	[ -n "$hits" ] && bad "family name \"$name\" outside the family parser: $(echo "$hits" | sed "s|^$top/||" | head -n3)"
done

[ $fail -eq 0 ] && echo "layers: $n_obj objects, $n_edges calls between files, no call or include upward, no loop ($layers)"
exit $fail
