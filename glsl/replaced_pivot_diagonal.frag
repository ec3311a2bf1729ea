// Beyond paper 002: a pivot of G11 that the guarded Cholesky factor replaced by `huge` (its
// column of C about 0, C(j, j) = sqrt(huge)) becomes G11's own diagonal entry, so that the
// partial Cholesky preconditioner weighs that direction by 1 / G11(j, j), as D_S weighs a row
// outside K, instead of 1 / huge (P^-1 blind to it). With C's column below the diagonal about 0,
// C(j, j) -> sqrt(G11(j, j)) is C times a diagonal matrix, so X = C^-1 changes by its row j alone:
//     rows:      X'(i, j) = X(i, j) C(i, i) / sqrt(G11(i, i))   where C(i, i) >= threshold,
//     otherwise: C'(i, j) = sqrt(G11(i, i)) at i = j            where C(i, i) >= threshold,
// every other entry as it was. M(i, j) (X or C) at texel (j, i), as C's and G11's.
uniform sampler2D M;
uniform sampler2D C;
uniform sampler2D G;
uniform float threshold;
uniform bool rows;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (j, i)
    int i = t.y;
    float value = texelFetch(M, t, 0).r;
    float pivot = texelFetch(C, ivec2(i, i), 0).r;
    float root = sqrt(texelFetch(G, ivec2(i, i), 0).r);
    if (pivot < threshold)
        result = value;
    else if (rows)
        result = value * (pivot / root);
    else
        result = t.x == i ? root : value;
}
