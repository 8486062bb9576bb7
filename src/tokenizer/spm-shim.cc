// spm-shim.cc -- the C interface of spm-shim.h over libsentencepiece's C++ API.
// Why this file is C++: see spm-shim.h. Every entry point catches every exception, so no
// C++ exception ever unwinds into C code; errors become one-line messages.
#include "tokenizer/spm-shim.h"

#include <sentencepiece_processor.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

struct spm_model {
	sentencepiece::SentencePieceProcessor sp;
};

// Copy MSG into ERR as one line: control characters (newlines included) become spaces.
static void shim_error(char *err, size_t errlen, const char *prefix, const std::string &msg)
{
	if (!err || errlen == 0)
		return;
	std::snprintf(err, errlen, "%s%s", prefix, msg.c_str());
	for (char *p = err; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	// a cut in the middle of a UTF-8 sequence leaves no partial character
	size_t n = std::strlen(err);
	size_t k = n;
	while (k > 0 && ((unsigned char)err[k - 1] & 0xC0) == 0x80)
		k--;
	if (k > 0 && ((unsigned char)err[k - 1] & 0x80)) {
		unsigned char lead = (unsigned char)err[k - 1];
		size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
		if (n - (k - 1) < want)
			err[k - 1] = '\0';
	}
}

extern "C" struct spm_model *spm_model_load(const void *data, size_t len, char *err, size_t errlen)
{
	try {
		// owned until returned: an exception from the library frees it too
		std::unique_ptr<spm_model> m(new spm_model);
		std::string bytes(static_cast<const char *>(data), len);
		const auto st = m->sp.LoadFromSerializedProto(bytes);
		if (!st.ok()) {
			shim_error(err, errlen, "not a SentencePiece model: ", st.ToString());
			return nullptr;
		}
		if (m->sp.GetPieceSize() <= 0) {
			shim_error(err, errlen, "", "the SentencePiece model has no pieces");
			return nullptr;
		}
		return m.release();
	} catch (const std::bad_alloc &) {
		shim_error(err, errlen, "", "out of memory");
	} catch (const std::exception &ex) {
		shim_error(err, errlen, "not a SentencePiece model: ", ex.what());
	} catch (...) {
		shim_error(err, errlen, "", "not a SentencePiece model");
	}
	return nullptr;
}

extern "C" void spm_model_free(struct spm_model *m)
{
	delete m;
}

extern "C" int spm_model_size(const struct spm_model *m)
{
	return m->sp.GetPieceSize();
}

extern "C" const char *spm_model_piece(const struct spm_model *m, int id, size_t *len)
{
	if (id < 0 || id >= m->sp.GetPieceSize())
		return nullptr;
	const std::string &s = m->sp.IdToPiece(id);
	if (len)
		*len = s.size();
	return s.c_str();
}

extern "C" int spm_model_piece_to_id(const struct spm_model *m, const char *s, size_t len)
{
	try {
		return m->sp.PieceToId(absl::string_view(s, len));
	} catch (...) {
		return m->sp.unk_id();
	}
}

extern "C" int spm_model_unk_id(const struct spm_model *m)
{
	return m->sp.unk_id();
}

extern "C" int spm_model_encode(const struct spm_model *m, const char *s, size_t len, struct spm_pieces *out,
				char *err, size_t errlen)
{
	std::memset(out, 0, sizeof *out);
	try {
		std::vector<std::string> pieces;
		const auto st = m->sp.Encode(absl::string_view(s, len), &pieces);
		if (!st.ok()) {
			shim_error(err, errlen, "SentencePiece: ", st.ToString());
			return -1;
		}
		size_t bytes = 1;
		for (const auto &p : pieces)
			bytes += p.size();
		size_t n = pieces.size();
		if (n > (size_t)1 << 28) {
			shim_error(err, errlen, "", "text too long");
			return -1;
		}
		out->text = static_cast<char *>(std::malloc(bytes));
		out->off = static_cast<size_t *>(std::malloc((n + 1) * sizeof *out->off));
		out->len = static_cast<size_t *>(std::malloc((n + 1) * sizeof *out->len));
		out->id = static_cast<int32_t *>(std::malloc((n + 1) * sizeof *out->id));
		if (!out->text || !out->off || !out->len || !out->id) {
			spm_pieces_free(out);
			shim_error(err, errlen, "", "out of memory");
			return -1;
		}
		size_t o = 0;
		for (size_t i = 0; i < n; i++) {
			std::memcpy(out->text + o, pieces[i].data(), pieces[i].size());
			out->off[i] = o;
			out->len[i] = pieces[i].size();
			out->id[i] = m->sp.PieceToId(pieces[i]);
			o += pieces[i].size();
		}
		out->text[o] = '\0';
		out->n = (int)n;
		return 0;
	} catch (const std::bad_alloc &) {
		spm_pieces_free(out);
		shim_error(err, errlen, "", "out of memory");
	} catch (const std::exception &ex) {
		spm_pieces_free(out);
		shim_error(err, errlen, "SentencePiece: ", ex.what());
	} catch (...) {
		spm_pieces_free(out);
		shim_error(err, errlen, "", "SentencePiece failed");
	}
	return -1;
}

extern "C" void spm_pieces_free(struct spm_pieces *p)
{
	if (!p)
		return;
	std::free(p->text);
	std::free(p->off);
	std::free(p->len);
	std::free(p->id);
	std::memset(p, 0, sizeof *p);
}
