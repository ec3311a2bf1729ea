// The residual at the pivots for PCG's first iteration (beyond 002): texel 2 + b of the
// scalars holds b(K_4b) .. b(K_4b+3) (r0 = b; 0 past the k-th), as pcg_step_scalars leaves
// the updated residual there after each iteration.
uniform sampler2D B;        // the right-hand side, a vector
uniform sampler2D Kpos;
uniform int k;
uniform int width;
out vec4 result;

float at(int i) {
    if (i >= k)
        return 0.0;
    int e = int(texelFetch(Kpos, ivec2(i, 0), 0).r);
    return texelFetch(B, ivec2(e % width, e / width), 0).r;
}

void main() {
    int b = int(WPOS.x) - 2;
    result = vec4(at(4 * b), at(4 * b + 1), at(4 * b + 2), at(4 * b + 3));
}
