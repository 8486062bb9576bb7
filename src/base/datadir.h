/* datadir.h -- where attnscope finds its bundled data (models/, models/families/, themes/):
 * one search rule for the engine, the themes, the tests and the bench. */
#ifndef ATTNSCOPE_DATADIR_H
#define ATTNSCOPE_DATADIR_H

#include <stdbool.h>
#include <stddef.h>

/* $ATTNSCOPE_DATADIR if set, else the installed package data directory, else (an uninstalled
 * build, run from the source tree) the source tree. */
const char *datadir_path(void);

/* PATH (room for N bytes) = DATADIR/FOLDER/NAME.yaml, the file a bundled family or theme is read from;
 * returns whether it exists. */
bool datadir_yaml(char *path, size_t n, const char *folder, const char *name);

#endif
