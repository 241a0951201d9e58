/* cmd.h - the commands of hpctrain-train: train (the default) and data.
 * Each returns an exit status of common/exitcode.h; argv[0] is the command. */
#ifndef HPT_TRAINER_CMD_H
#define HPT_TRAINER_CMD_H

int cmd_train(int argc, char **argv);
int cmd_data(int argc, char **argv);

#endif
