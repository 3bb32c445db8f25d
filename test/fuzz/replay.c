// SPDX-License-Identifier: GPL-2.0-or-later
/* replay: run a fuzz target's LLVMFuzzerTestOneInput over every regular
 * file of a corpus directory, so every build (without libFuzzer) proves the
 * checked-in corpus still passes. A missing or empty directory fails: an
 * empty corpus would otherwise test nothing and pass. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;
	int ret = -1;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		goto out;
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
		goto out;
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	ret = 0;
out:
	free(buf);
	fclose(f);
	return ret;
}

int main(int argc, char **argv)
{
	DIR *d;
	struct dirent *e;
	size_t n = 0;
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 1;
	}
	d = opendir(argv[1]);
	if (!d) {
		perror(argv[1]);
		return 1;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name) >=
		    (int)sizeof(path))
			continue;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(path) < 0) {
			fprintf(stderr, "%s: cannot read\n", path);
			closedir(d);
			return 1;
		}
		n++;
	}
	closedir(d);
	printf("replayed %zu inputs\n", n);
	return n > 0 ? 0 : 1;
}
