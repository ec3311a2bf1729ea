// Upper bounds in the Newton system (beyond paper 000; gpgpu/lp/bounds.py): the solution
// z = [z1; z2] of the normal equations of every row from the Schur system's z1:
//     z2_k = (r2_k - alpha_k d_x (A_main^T z1)_x) / G_k,   G_k = alpha_k^2 d_x + beta_k^2 d_w + delta.
// Entries 0 .. m-1 copy z1; `rows` holds (x, w, alpha, beta) of bound row k; T = A_main^T z1.
uniform sampler2D Z1;
uniform sampler2D R;
uniform sampler2D T;
uniform sampler2D D;
uniform sampler2D rows;
uniform int m;
uniform float delta;
out float result;

void main() {
    float i = floor(WPOS.x);
    if (i < float(m)) {
        result = texRECT(Z1, WPOS);
        return;
    }
    vec4 b = texRECT4(rows, vec2(i - float(m) + 0.5, 0.5));
    float dx = texRECT(D, vec2(b.x + 0.5, 0.5));
    float g = b.z * b.z * dx + b.w * b.w * texRECT(D, vec2(b.y + 0.5, 0.5)) + delta;
    result = (texRECT(R, WPOS) - b.z * dx * texRECT(T, vec2(b.x + 0.5, 0.5))) / g;
}
