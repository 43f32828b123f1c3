// SPDX-License-Identifier: GPL-2.0
/*
 * The MPI job of lchan_mpi_test, run by mpirun as two ranks: a ping-pong
 * of messages from 1 B to 64 KiB whose every byte is checked on both
 * sides, then an allreduce (sum) of a vector checked element by element.
 * Rank 0 then creates DIR/ready and waits (up to 60 s) for DIR/go, so the
 * test can look at the job's channels while both ranks hold them.  Prints
 * one "rank R: ok ..." line per rank; exits non-zero on any mismatch.
 *
 *   lchan_mpi_ranks DIR
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MPI_R_ROUNDS	200
#define MPI_R_MAX	65536
#define MPI_R_VEC	4096

static unsigned char mpi_r_byte(int round, int from, size_t i)
{
	return (unsigned char)(round * 131 + from * 71 + i * 7 + 1);
}

static size_t mpi_r_size(int round)
{
	/* 1 B, then doubling to 64 KiB, over and over. */
	return (size_t)1 << (round % 17);
}

/* The ping-pong: rank 0 sends, rank 1 checks and answers with its own. */
static int mpi_r_pingpong(int rank, unsigned char *buf, double *us)
{
	int round, bad = 0, peer = !rank;
	double t0 = MPI_Wtime();
	size_t i, n;

	for (round = 0; round < MPI_R_ROUNDS; round++) {
		n = mpi_r_size(round);
		if (rank == 0) {
			for (i = 0; i < n; i++)
				buf[i] = mpi_r_byte(round, 0, i);
			MPI_Send(buf, n, MPI_BYTE, peer, round, MPI_COMM_WORLD);
		}
		memset(buf, 0, n);
		MPI_Recv(buf, n, MPI_BYTE, peer, round, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		for (i = 0; i < n; i++)
			if (buf[i] != mpi_r_byte(round, peer, i)) {
				bad++;
				break;
			}
		if (rank == 1) {
			for (i = 0; i < n; i++)
				buf[i] = mpi_r_byte(round, 1, i);
			MPI_Send(buf, n, MPI_BYTE, peer, round, MPI_COMM_WORLD);
		}
	}
	*us = (MPI_Wtime() - t0) * 1e6 / MPI_R_ROUNDS;
	return bad;
}

static int mpi_r_allreduce(int rank, int size)
{
	static long in[MPI_R_VEC], out[MPI_R_VEC];
	int i, bad = 0;

	for (i = 0; i < MPI_R_VEC; i++)
		in[i] = (long)(rank + 1) * (i + 3);
	MPI_Allreduce(in, out, MPI_R_VEC, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < MPI_R_VEC; i++)
		if (out[i] != (long)size * (size + 1) / 2 * (i + 3))
			bad++;
	return bad;
}

/* Rank 0: tell the test the job is up, wait until it has looked. */
static void mpi_r_hold(const char *dir)
{
	char path[4096];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/ready", dir);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/go", dir);
	for (i = 0; i < 600 && access(path, F_OK); i++)
		nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
}

int main(int argc, char **argv)
{
	static unsigned char buf[MPI_R_MAX];
	int rank, size, pp_bad, ar_bad, bad;
	double us;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 %s DIR\n", argv[0]);
		MPI_Finalize();
		return 2;
	}
	pp_bad = mpi_r_pingpong(rank, buf, &us);
	ar_bad = mpi_r_allreduce(rank, size);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		mpi_r_hold(argv[1]);
	MPI_Barrier(MPI_COMM_WORLD);
	bad = pp_bad || ar_bad;
	printf("rank %d: %s: ping-pong %d rounds (1 B to 64 KiB), %d bad, %.1f us a round trip; allreduce of %d longs, %d bad\n",
	       rank, bad ? "FAILED" : "ok", MPI_R_ROUNDS, pp_bad, us,
	       MPI_R_VEC, ar_bad);
	MPI_Finalize();
	return bad ? 1 : 0;
}
