/* datadir.h -- where attnscope finds its bundled data (models/, models/families/, themes/):
 * one search rule for the engine, the themes, the tests and the bench. */
#ifndef ATTNSCOPE_DATADIR_H
#define ATTNSCOPE_DATADIR_H

/* $ATTNSCOPE_DATADIR if set, else the installed package data directory, else (an uninstalled
 * build, run from the source tree) the source tree. */
const char *datadir_path(void);

#endif
