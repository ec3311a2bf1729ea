// y + sign * sum_c P_c u(c), optionally times d, element by element: a vector plus a
// combination of the k planes of a stacked texture (plane c at texture rows c plane_rows ..,
// each folded like y) with the coefficients u, a k x 1 stream. The "L21 u1" and "L21^T"
// halves of applying the partial Cholesky preconditioner of paper 002, (7)-(8), to a vector:
// one fragment per entry of y, a loop over the k nontrivial columns of P.
uniform sampler2D Y;
uniform sampler2D P;
uniform sampler2D U;
uniform sampler2D D;
uniform int k;
uniform int plane_rows;
uniform float sign;
uniform bool scaled;
out float result;

void main() {
    ivec2 t = ivec2(WPOS);
    float acc = 0.0;
    for (int c = 0; c < k; ++c)
        acc += texelFetch(P, ivec2(t.x, t.y + c * plane_rows), 0).r * texelFetch(U, ivec2(0, c), 0).r;
    float v = texRECT(Y, WPOS) + sign * acc;
    result = scaled ? v * texRECT(D, WPOS) : v;
}
