/*
 * spawn-rss REPORT CMD [ARGS...] — run CMD with this process's stdio, wait for it, and write
 * "<wall ns> <peak RSS KiB> <exit status>\n" to the file REPORT.
 *
 * Why a helper: Linux seeds a process's ru_maxrss with the RSS high-water mark of the
 * process it was forked from (exec copies the old mm's peak into signal->maxrss). bench/run
 * is a Python process holding corpora in memory, so its children would all report ~250 MiB.
 * Forked from this tiny process instead, the command's ru_maxrss is its own (plus < 2 MiB).
 * Wall time runs from just before fork to the return of wait4, so it excludes this helper's
 * own start-up. Exit status: the command's (128 + signal when killed).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: spawn-rss REPORT CMD [ARGS...]\n");
		return 2;
	}
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pid_t pid = fork();
	if (pid < 0) {
		perror("spawn-rss: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror("spawn-rss: exec");
		_exit(127);
	}
	int status = 0;
	struct rusage usage;
	if (wait4(pid, &status, 0, &usage) < 0) {
		perror("spawn-rss: wait4");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	long long ns = (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	FILE *report = fopen(argv[1], "w");
	if (!report) {
		perror("spawn-rss: report");
		return 2;
	}
	fprintf(report, "%lld %ld %d\n", ns, usage.ru_maxrss, code);
	fclose(report);
	return code;
}
