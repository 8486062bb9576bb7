/* hub.c -- model name resolution: folders, bundled models, the Hugging Face cache (see hub.h). */
#include "engine/hub.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/datadir.h"

static bool hub_is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool hub_has_config(const char *dir)
{
	char path[PATH_MAX];
	struct stat sb;
	return snprintf(path, sizeof path, "%s/config.json", dir) < (int)sizeof path && stat(path, &sb) == 0;
}

void hub_cache_dir(char *out, size_t outsz)
{
	const char *v = getenv("HF_HUB_CACHE");
	if (v && *v) {
		snprintf(out, outsz, "%s", v);
		return;
	}
	v = getenv("HF_HOME");
	if (v && *v) {
		snprintf(out, outsz, "%s/hub", v);
		return;
	}
	v = getenv("XDG_CACHE_HOME");
	if (v && *v) {
		snprintf(out, outsz, "%s/huggingface/hub", v);
		return;
	}
	v = getenv("HOME");
	snprintf(out, outsz, "%s/.cache/huggingface/hub", v ? v : "");
}

/* In the cache repo folder REPO, pick the snapshot named by refs/main, else the only snapshot. */
static int hub_snapshot(const char *repo, char *out, size_t outsz)
{
	char path[PATH_MAX], hash[128] = "";
	snprintf(path, sizeof path, "%s/refs/main", repo);
	FILE *fp = fopen(path, "r");
	if (fp) {
		if (fgets(hash, sizeof hash, fp))
			hash[strcspn(hash, "\r\n \t")] = 0;
		fclose(fp);
	}
	if (hash[0] && !strchr(hash, '/') && strcmp(hash, "..") != 0) {
		snprintf(out, outsz, "%s/snapshots/%s", repo, hash);
		if (hub_has_config(out))
			return 0;
	}
	snprintf(path, sizeof path, "%s/snapshots", repo);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int found = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char cand[PATH_MAX];
		if (snprintf(cand, sizeof cand, "%s/%s", path, de->d_name) >= (int)sizeof cand)
			continue;
		if (hub_has_config(cand)) {
			found++;
			snprintf(out, outsz, "%s", cand);
		}
	}
	closedir(d);
	return found == 1 ? 0 : -1;
}

/* Look NAME ("gpt2", "openai-community/gpt2") up in the cache folder CACHE. */
static int hub_from_cache(const char *cache, const char *name, char *out, size_t outsz)
{
	char repo[PATH_MAX], flat[256];
	size_t j = 0;
	for (size_t i = 0; name[i] && j + 3 < sizeof flat; i++) {
		if (name[i] == '/') {
			flat[j++] = '-';
			flat[j++] = '-';
		} else {
			flat[j++] = name[i];
		}
	}
	flat[j] = 0;
	if (snprintf(repo, sizeof repo, "%s/models--%s", cache, flat) >= (int)sizeof repo)
		return -1;
	if (hub_is_dir(repo))
		return hub_snapshot(repo, out, outsz);
	if (strchr(name, '/'))
		return -1;
	/* A bare name ("gpt2") may be cached under its organisation ("models--openai-community--gpt2"). */
	DIR *d = opendir(cache);
	if (!d)
		return -1;
	int rc = -1;
	char suffix[300];
	snprintf(suffix, sizeof suffix, "--%s", name);
	size_t sl = strlen(suffix);
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t dl = strlen(de->d_name);
		if (strncmp(de->d_name, "models--", 8) == 0 && dl > sl + 8 && strcmp(de->d_name + dl - sl, suffix) == 0 &&
		    strstr(de->d_name + 8, "--") == de->d_name + dl - sl /* exactly ORG--NAME */) {
			if (snprintf(repo, sizeof repo, "%s/%s", cache, de->d_name) < (int)sizeof repo &&
			    hub_snapshot(repo, out, outsz) == 0) {
				rc = 0;
				break;
			}
		}
	}
	closedir(d);
	return rc;
}

int hub_resolve(const char *name, char *out, size_t outsz, struct err *e)
{
	if (!name || !*name)
		return err_set(e, "empty model name");
	if (hub_is_dir(name)) {
		if (!hub_has_config(name))
			return err_set(e, "%s: no config.json in this folder", name);
		snprintf(out, outsz, "%s", name);
		return 0;
	}
	bool looks_like_path = name[0] == '/' || name[0] == '.' || strstr(name, "//") || strstr(name, "..");
	if (looks_like_path)
		return err_set(e, "%s: no such model folder", name);

	char cand[PATH_MAX], cache[PATH_MAX];
	/* attnscope's own model directories: the bundled models, then the user's. */
	snprintf(cand, sizeof cand, "%s/models/%s", datadir_path(), name);
	if (hub_has_config(cand)) {
		snprintf(out, outsz, "%s", cand);
		return 0;
	}
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(cand, sizeof cand, "%s/attnscope/models/%s", xdg, name);
	else
		snprintf(cand, sizeof cand, "%s/.local/share/attnscope/models/%s", home ? home : "", name);
	if (hub_has_config(cand)) {
		snprintf(out, outsz, "%s", cand);
		return 0;
	}
	hub_cache_dir(cache, sizeof cache);
	if (hub_from_cache(cache, name, out, outsz) == 0)
		return 0;
	return err_set(e, "model '%s' not found: not a folder, not in %s/models, not in the Hugging Face cache %s "
			  "(attnscope never downloads)", name, datadir_path(), cache);
}
