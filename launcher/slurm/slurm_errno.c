/* slurm_errno.c - libslurm's errno as an exit status (see slurm_errno.h). */
#include "launcher/slurm/slurm_errno.h" // defines: hpt_slurm_errno_status
#include "common/exitcode.h"            // defines: HPT_EXIT_*

#include <errno.h>
#include <slurm/slurm_errno.h>

int hpt_slurm_errno_status(int e)
{
	switch (e) {
	case SLURM_COMMUNICATIONS_CONNECTION_ERROR:
	case SLURM_COMMUNICATIONS_SEND_ERROR:
	case SLURM_COMMUNICATIONS_RECEIVE_ERROR:
	case SLURM_COMMUNICATIONS_SHUTDOWN_ERROR:
	case SLURM_COMMUNICATIONS_MISSING_SOCKET_ERROR:
	case SLURM_PROTOCOL_VERSION_ERROR:
	case SLURM_PROTOCOL_AUTHENTICATION_ERROR:
	case SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR:
	case SLURMCTLD_COMMUNICATIONS_SEND_ERROR:
	case SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR:
	case SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR:
	/* a controller that accepts and never answers (stopped, hung), or
	 * hangs up mid-message: it cannot be heard, as a down one */
	case SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT:
	case SLURM_PROTOCOL_SOCKET_IMPL_ZERO_RECV_LENGTH:
	case SLURM_PROTOCOL_SOCKET_IMPL_NEGATIVE_RECV_LENGTH:
	case SLURM_PROTOCOL_SOCKET_IMPL_NOT_ALL_DATA_SENT:
	case SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT:
	case ESLURM_PROTOCOL_INCOMPLETE_PACKET:
	case ESLURM_AUTH_CRED_INVALID:
	case ESLURM_IN_STANDBY_MODE:
	case ETIMEDOUT:
	case ECONNREFUSED:
	case ECONNRESET:
		return HPT_EXIT_UNAVAILABLE;
	case ESLURM_INVALID_JOB_ID:
		return HPT_EXIT_NO_INPUT;
	default:
		return HPT_EXIT_REJECTED;
	}
}
