// The backward half of applying paper 002's partial Cholesky preconditioner (7)-(8) in one
// pass: w + sum_c E_c (u1(c) - g(c)), element by element, with E the k planes of C^-1 placed at
// the pivoted rows K and u1, g two k x 1 streams (u1 = C^-1 r1, g = B2^T w). As
// plane_combination.frag with sign +1 and U = u1 - g, whose subtraction (a pass of its own
// over k texels before) each fragment does for itself: k subtractions more a fragment, one
// pass fewer a P^-1.
uniform sampler2D Y;    // w
uniform sampler2D P;    // E
uniform sampler2D U;    // u1
uniform sampler2D G;    // g
uniform int k;
uniform int plane_rows;
out float result;

void main() {
    ivec2 t = ivec2(WPOS);
    float acc = 0.0;
    for (int c = 0; c < k; ++c) {
        float v = texelFetch(G, ivec2(0, c), 0).r * -1.0 + texelFetch(U, ivec2(0, c), 0).r;
        acc += texelFetch(P, ivec2(t.x, t.y + c * plane_rows), 0).r * v;
    }
    result = texRECT(Y, WPOS) + acc;
}
