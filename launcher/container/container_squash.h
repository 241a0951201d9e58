/* container_squash.h - a SquashFS image mounted with squashfuse outside
 * ch-run, once per node, for the ranks of the node to share.
 *
 * Shell.  ch-run given a SquashFS file forks and stays behind as its
 * FUSE server, so the supervisor's signals and kills reach ch-run, not
 * the program.  Mounted here first, the image is a directory to ch-run,
 * which then execs in place: the program keeps the supervisor as its
 * parent.
 *
 * Where: DIR/hpctrain-squash-UID/KEY, DIR being $XDG_RUNTIME_DIR, else
 * $TMPDIR, else /tmp (node-local), the folder private (0700, refused
 * when another user owns it or others may write it), KEY the image's
 * content digest (another image is another mount point).
 *
 * Trust: the name claims a digest, so the claim is checked.  Before
 * mounting (under LOCK_EX), the image file's digest must be the key's
 * (container_digest, through its cache) and its statkey the same across
 * the hash and after squashfuse opened it; KEY.id then records that
 * statkey and the file's path.  squashfuse reads that file for as long
 * as it serves the mount, so a mount is reused only while the recorded
 * file keeps its statkey; one whose file was rewritten or replaced is
 * stale: unmounted and made again from (and checked against) the image
 * asked for, or, while other ranks still hold it, an error.
 *
 * Sharing: KEY.lock, flock(2)ed.  The first rank mounts under LOCK_EX;
 * every rank then holds LOCK_SH for as long as it runs the image (the
 * supervisor does; without --supervise the descriptor stays open across
 * exec, so the program holds it).  container_squash_release takes
 * LOCK_EX without waiting: it gets it only when no other rank holds the
 * image, and then unmounts (fusermount -u) and removes the mount point
 * and the lock file (a rank that opened it before finds, once it holds
 * the lock, that the path names another file or none, and starts over).
 * The kernel drops the lock of a process that dies, so a killed rank
 * never keeps the count up.  A mount no rank released (every rank of the
 * node KILLed, or only unsupervised ranks) stays for the next launch of
 * that image on the node, which reuses it and unmounts it at its end; a
 * mount whose squashfuse died (ENOTCONN) is unmounted and made again.
 */
#ifndef HPT_CONTAINER_SQUASH_H
#define HPT_CONTAINER_SQUASH_H

struct sbuf;

struct container_squash {
	char *dir;   /* the mount point, NULL when nothing is mounted */
	int lock_fd; /* KEY.lock, held LOCK_SH; -1 when none */
};

#define CONTAINER_SQUASH_INIT { NULL, -1 }

/* Mounts image (a SquashFS file) at the node's mount point for key (a
 * digest, "sha256:HEX"; NULL: the image's path names it), or finds it
 * mounted (and current, see Trust), and holds it.  0, or -1 with err in
 * one line (no squashfuse in PATH, an image whose digest is not key, a
 * mount that failed, a stale mount in use, a mount point not ours). */
int container_squash_mount(const char *image, const char *key, struct container_squash *m,
			   struct sbuf *err);

/* The mount point container_squash_mount would use for image and key,
 * neither made nor looked at (launch --dry-run shows it).  Never NULL. */
char *container_squash_path(const char *image, const char *key);

/* Lets the lock's descriptor stay open across exec, for a program
 * exec'd in place of launch (no supervisor) to hold the image: 0 or -1.
 * Otherwise it is close-on-exec, so that squashfuse, ch-run and the
 * program's children never hold the count up after the supervisor. */
int container_squash_inherit(struct container_squash *m);

/* Lets go of the image; the last rank of the node to let go unmounts
 * it.  Accepts a zeroed or CONTAINER_SQUASH_INIT struct. */
void container_squash_release(struct container_squash *m);

#endif
