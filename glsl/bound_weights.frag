// Upper bounds in the Newton system (beyond paper 000; gpgpu/lp/bounds.py): the weights d~ of
// the Schur complement A_main diag(d~) A_main^T + delta I that is formed and factored instead of
// the normal matrix of every row. `info` holds, for column j, (k + 1, w, alpha, beta) when j is
// the bounded x of bound row k (alpha x + beta w = u, w the slack's column), (-(k + 1), x, 0, 0)
// when j is that slack, 0 otherwise. For a bounded column
//     d~ = d_x (beta^2 d_w + delta) / (alpha^2 d_x + beta^2 d_w + delta),
// written so that a huge d_x does not overflow; a slack's column is not in the main rows (0).
uniform sampler2D D;
uniform sampler2D info;
uniform float delta;
out float result;

void main() {
    vec4 b = texRECT4(info, WPOS);
    float d = texRECT(D, WPOS);
    if (b.x > 0.0) {
        float keep = b.w * b.w * texRECT(D, vec2(b.y + 0.5, 0.5)) + delta;
        result = keep / (b.z * b.z + keep / d);
    } else {
        result = b.x < 0.0 ? 0.0 : d;
    }
}
