/* oob.c: the side-channel wrappers and the barrier every backend shares; see oob.h. */
#include "oob/oob.h"

#include <errno.h>
#include <string.h>

#include "base/log.h"

int rp_oob_send(struct rp_oob *oob, const void *buf, size_t len, double deadline)
{
	return oob->ops->send(oob, buf, len, deadline);
}

int rp_oob_recv(struct rp_oob *oob, void *buf, size_t len, double deadline)
{
	return oob->ops->recv(oob, buf, len, deadline);
}

void rp_oob_close(struct rp_oob *oob)
{
	if (oob && oob->ops)
		oob->ops->close(oob);
}

/* Send a fixed token and expect the same token back: both sides reached this point. */
int rp_oob_barrier(struct rp_oob *oob, double deadline)
{
	static const char token[8] = "RPBARR01";
	char got[8];
	int rc;

	rc = rp_oob_send(oob, token, sizeof(token), deadline);
	if (rc)
		return rc;
	rc = rp_oob_recv(oob, got, sizeof(got), deadline);
	if (rc)
		return rc;
	if (memcmp(got, token, sizeof(token)) != 0)
		return rp_error(-EBADMSG, "barrier with %s: unexpected message", oob->peer);
	return 0;
}
