/* main.c -- command line: options and modes (TUI, --dump, --print). */
#include "config.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	puts(PACKAGE_STRING);
	return 0;
}
