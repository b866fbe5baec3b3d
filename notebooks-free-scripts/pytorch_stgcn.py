"""The graph models of pytorch_tcn.py (model.type stgcn and stgcn++): ST-GCN (Yan et al.,
2018) and ST-GCN++ (Duan et al., 2022, PYSKL) as poseact builds them, for the trainer in
pytorch_tcn.py; not a script of its own. Layer for layer as poseact's, with one exception:
the weights start from PyTorch's default initialisation, not from poseact's SplitMix64
stream (the runs agree in distribution only after the first step anyway; a bit-exact start
would buy nothing).

The skeleton graph is poseact's: one node per joint of the windows file's layout, each
joint linked to its parent (pytorch_tcn.parent_positions, as Skeleton.parentPositions), the
joints without one linked to the centre. Three partitions, PYSKL's spatial ones with
normalize_digraph, written as M[k][w][v] (output joint w reads input joint v), the
transpose of PYSKL's A[k][v][w]: k=0 the joint itself; k=1 its parent (the neighbour nearer
the centre); k=2 its children, each 1/(number of children).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def skeleton_partitions(names, parents):
    """M (3, V, V) for joints `names` (canonical, in layout order) with `parents` (index or
    None). The centre is root if present, else neck, else the first joint without a parent;
    every other joint without a parent hangs from it, so the graph is one tree."""
    V = len(names)
    centre = next((names.index(n) for n in ("root", "neck") if n in names),
                  next(j for j, p in enumerate(parents) if p is None))
    parent = [centre if p is None and j != centre else p for j, p in enumerate(parents)]
    M = torch.zeros(3, V, V)
    for w in range(V):
        M[0, w, w] = 1
        if parent[w] is not None:
            M[1, w, parent[w]] = 1
        children = [c for c in range(V) if parent[c] == w]
        for c in children:
            M[2, w, c] = 1 / len(children)
    return M


def conv_bn(cin, cout, kernel=(1, 1), stride=(1, 1), padding=(0, 0), dilation=(1, 1)):
    """Conv2d without bias (the batch norm after it has the shift) → BatchNorm2d."""
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, padding, dilation, bias=False), nn.BatchNorm2d(cout))


class GraphConv(nn.Module):
    """PYSKL's unit_gcn with conv_pos='post': each partition's neighbours gathered, then one
    1×1 convolution over the K·C channels, then BatchNorm and ReLU. ST-GCN learns an edge
    importance PA (A = M ⊙ PA, PA from ones); ST-GCN++ learns every entry of A (from M) and
    adds a residual inside the unit."""

    def __init__(self, cin, cout, M, plus):
        super().__init__()
        if plus:
            self.A = nn.Parameter(M.clone())
            self.down = nn.Identity() if cin == cout else conv_bn(cin, cout)
        else:
            # Not learnt and not saved: the constant partitions the importance multiplies.
            self.register_buffer("M", M.clone(), persistent=False)
            self.PA = nn.Parameter(torch.ones_like(M))
        self.plus = plus
        self.conv = nn.Conv2d(M.shape[0] * cin, cout, 1)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):   # (N, C, T, V)
        n, _, t, v = x.shape
        A = self.A if self.plus else self.M * self.PA
        z = torch.einsum("nctv,kwv->nkctw", x, A).reshape(n, -1, t, v)
        y = self.bn(self.conv(z))
        return F.relu(y + self.down(x) if self.plus else y)


class MultiScaleTemporal(nn.Module):
    """PYSKL's mstcn with ms_cfg [(3,1), (3,2), (3,3), (3,4), '1x1'] (no max-pool branch):
    four dilated 3-frame branches and a 1×1 one, out // 5 channels each (the first takes the
    remainder), concatenated → BN → ReLU → 1×1 conv → BN."""

    def __init__(self, c, stride):
        super().__init__()
        mid = c // 5
        widths = [c - 4 * mid] + [mid] * 4
        branches = [nn.Sequential(conv_bn(c, b), nn.ReLU(), conv_bn(b, b, (3, 1), (stride, 1), (d, 0), (d, 1)))
                    for b, d in zip(widths, (1, 2, 3, 4))]
        branches.append(conv_bn(c, widths[4], stride=(stride, 1)))
        self.branches = nn.ModuleList(branches)
        self.transform = nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), conv_bn(c, c))

    def forward(self, x):
        return self.transform(torch.cat([b(x) for b in self.branches], dim=1))


class GraphBlock(nn.Module):
    """Graph convolution → temporal convolution (9 frames for ST-GCN, multi-scale for
    ST-GCN++), + the block's input (a strided 1×1 conv + BN where the shape changes) → ReLU."""

    def __init__(self, cin, cout, stride, M, plus, residual):
        super().__init__()
        self.gcn = GraphConv(cin, cout, M, plus)
        self.tcn = MultiScaleTemporal(cout, stride) if plus else conv_bn(cout, cout, (9, 1), (stride, 1), (4, 0))
        if not residual:
            self.residual = None
        elif cin == cout and stride == 1:
            self.residual = nn.Identity()
        else:
            self.residual = conv_bn(cin, cout, stride=(stride, 1))

    def forward(self, x):
        h = self.tcn(self.gcn(x))
        return F.relu(h if self.residual is None else h + self.residual(x))


class GraphNet(nn.Module):
    """ST-GCN (plus=False) or ST-GCN++ (plus=True) on windows (B, T, V·F), channels last:
    one block per entry of `blocks` (its output channels; a block after the first that
    widens halves the frames), then the mean over joints and valid frames, dropout and a linear head."""

    def __init__(self, joints, features, classes, M, blocks, dropout, plus, input_norm=False):
        super().__init__()
        self.joints, self.features = joints, features
        # model.input_norm: as the TCN's, a BatchNorm over the V·F input channels (stats over B·T).
        self.input_bn = nn.BatchNorm1d(joints * features) if input_norm else None
        layers, c, self.stride = [], features, 1
        for i, out in enumerate(blocks):
            s = 2 if i > 0 and out > blocks[i - 1] else 1
            layers.append(GraphBlock(c, out, s, M, plus, residual=i > 0))
            c, self.stride = out, self.stride * s
        self.blocks = nn.ModuleList(layers)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(c, classes)

    def forward(self, x, mask):   # x (B,T,V·F) channels last, mask (B,T) → logits (B,K)
        B, T, _ = x.shape
        if self.input_bn is not None:
            x = self.input_bn(x.transpose(1, 2)).transpose(1, 2)
        h = x.reshape(B, T, self.joints, self.features).permute(0, 3, 1, 2).contiguous()   # (N, C, T, V)
        for b in self.blocks:
            h = b(h)
        # Strided frame t' stands for input frame t'·S; a window with none valid counts them all.
        valid = (mask[:, ::self.stride] > 0).to(h.dtype)
        valid = torch.where(valid.sum(1, keepdim=True) > 0, valid, torch.ones_like(valid))
        pooled = torch.einsum("bctv,bt->bc", h, valid) / (valid.sum(1, keepdim=True) * self.joints)
        return self.head(self.drop(pooled))
