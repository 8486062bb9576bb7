"""Export a training checkpoint of tools/train_demo.py as a demo model folder (F16), without more training.
Usage: /usr/bin/python3 tools/export_checkpoint.py bert|gpt2 CHECKPOINT OUT_DIR"""
import os, sys
for v in ("OPENBLAS_NUM_THREADS","OMP_NUM_THREADS"): os.environ[v]="1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch, train_demo as T, demo_models
torch.set_num_threads(1)
fam, ckpt, out = sys.argv[1], sys.argv[2], sys.argv[3]
cfg = dict(T.BERT_CONFIG if fam == "bert" else T.GPT2_CONFIG)
m = demo_models.build(fam, cfg)
st = torch.load(ckpt)
print(m.load_state_dict(st["model"]), "step", st["step"], "tokens", st["tokens"])
with torch.no_grad():
    for p in m.parameters(): p.copy_(p.half().float())
vocab = T.vocab_files("/tmp/npm/node_modules", os.path.dirname(os.path.abspath(ckpt)))
T.export(fam, m, cfg, vocab, out)
print("exported", out)
