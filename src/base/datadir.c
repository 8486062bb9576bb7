/* datadir.c -- the data directory's search rule (see datadir.h). */
#include "base/datadir.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

const char *datadir_path(void)
{
	const char *d = getenv("ATTNSCOPE_DATADIR");
	if (d && *d)
		return d;
	/* Installed data first; an uninstalled build (./attnscope in the source tree) uses the sources. */
	struct stat sb;
	if (stat(PKGDATADIR "/models/families", &sb) == 0 || stat(SRCDIR "/models/families", &sb) != 0)
		return PKGDATADIR;
	return SRCDIR;
}

bool datadir_yaml(char *path, size_t n, const char *folder, const char *name)
{
	snprintf(path, n, "%s/%s/%s.yaml", datadir_path(), folder, name);
	struct stat sb;
	return stat(path, &sb) == 0;
}
