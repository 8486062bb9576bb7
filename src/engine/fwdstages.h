/* fwdstages.h -- where a forward pass spends its time, stage by stage, for the benchmark's breakdown.
 * Collected only when asked for (the model's STAGES pointer set): a clock read per stage per layer. */
#ifndef ATTNSCOPE_FWDSTAGES_H
#define ATTNSCOPE_FWDSTAGES_H

enum fwd_stage {
	FWD_EMBED,      /* embedding rows, their sum and norm */
	FWD_QKV,        /* the q, k, v projections */
	FWD_SCORES,     /* q·kᵀ per head (and relative terms, soft-capping): attnscore_logits */
	FWD_SOFTMAX,    /* masks and row softmax: attnscore_softmax */
	FWD_PV,         /* probabilities · v per head */
	FWD_OUT_PROJ,   /* the attention output projection */
	FWD_NORM,       /* LayerNorm / RMSNorm of the blocks */
	FWD_MLP_GEMM,   /* the MLP's up/gate and down projections */
	FWD_ACTIVATION, /* GELU, SiLU, gating */
	FWD_ADD,        /* residual additions */
	FWD_TRACE,      /* copies into the trace: per-head q/k/v (with rotary), hidden states */
	FWD_STAGES
};

/* Wall-clock seconds per stage, summed over the runs that had this struct attached. The per-head
 * stages run on several threads at once: their shares of the heads' wall time follow the threads'
 * summed times in each of them. */
struct fwd_stages {
	double seconds[FWD_STAGES];
	int runs;
};

const char *fwd_stage_name(enum fwd_stage s);

#endif
