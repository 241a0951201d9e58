# launcher/launch/build.mk - one rank's launch step by step (launch.c),
# its contract said (launch_contract.c) and its program wrapped in its
# container (launch_container.c); `hpctrain launch` carries them out.
