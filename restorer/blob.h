/* SPDX-License-Identifier: MIT */
/*
 * The in-target restorer as the host sees it: the flat blob's bytes
 * (restorer/blob_embed.S).  Copy ptimer_blob_start..ptimer_blob_end to
 * offset 0 of the mapping described in restorer/abi.h and map it R-X; the
 * entry point is offset 0; struct ptimer_blob_args goes at offset
 * (ptimer_blob_end - ptimer_blob_start), which is a multiple of 4096.
 */
#ifndef PTIMER_RESTORER_BLOB_H
#define PTIMER_RESTORER_BLOB_H

extern const unsigned char ptimer_blob_start[], ptimer_blob_end[];

#endif
