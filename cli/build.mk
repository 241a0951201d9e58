# cli/build.mk - bin/hpctrain's entry point and the commands that need
# nothing beyond the job spec; the others are listed with the part they
# drive (launcher/, topology/).

CLI_SHELL  = cli/json_print.c cli/submit_report.c cli/cmd_validate.c cli/cmd_template.c cli/main.c

HPCTRAIN_SRC  += $(CLI_SHELL)
