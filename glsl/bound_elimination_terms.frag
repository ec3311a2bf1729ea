// Upper bounds in the Newton system (beyond paper 000; gpgpu/lp/bounds.py): the terms
// v = D E alpha G^-1 r2 of the Schur system's right-hand side r1 - A_main v, where r2 is the
// bound rows' part of the right-hand side (entries m .. of R) and
// G_k = alpha_k^2 d_x + beta_k^2 d_w + delta. `info` as in bound_weights.frag; v is 0 off the
// bounded columns.
uniform sampler2D D;
uniform sampler2D info;
uniform sampler2D R;
uniform int m;          // rows of the normal matrix: bound row k is entry m + k of R
uniform float delta;
out float result;

void main() {
    vec4 b = texRECT4(info, WPOS);
    if (b.x <= 0.0) {
        result = 0.0;
        return;
    }
    float dx = texRECT(D, WPOS);
    float g = b.z * b.z * dx + b.w * b.w * texRECT(D, vec2(b.y + 0.5, 0.5)) + delta;
    float r2 = texRECT(R, vec2(float(m) + b.x - 0.5, 0.5));        // entry m + k, k = b.x - 1
    result = dx * b.z * r2 / g;
}
