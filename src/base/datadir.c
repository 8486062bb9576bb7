/* datadir.c -- the data directory's search rule (see datadir.h). */
#include "base/datadir.h"

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
