// Forward substitution C Y = R with the k x k lower factor C, for every column of the
// right-hand side at once: the rows of R and Y are planes (vectors of length m folded
// `plane_rows` texture rows high, plane p at texture rows p plane_rows ..), the L21 =
// G21 L11^-T D_L^-1 of the partial Cholesky preconditioner of paper 002, (7)-(8), "by
// triangular solves". Step j (one pass) finishes plane j, Y_j = R_j / C(j, j), and removes it
// from every plane below it, R_i -= C(i, j) Y_j: the outer-product (right-looking) order of
// substitution, as Algorithm 2 of 000 is of Cholesky. Planes above j are copied (ping-pong).
// C(i, j) is texel (j, i) of C (the factor as gpgpu.cholesky leaves it).
uniform sampler2D R;
uniform sampler2D C;
uniform int j;
uniform int plane_rows;
out float result;

void main() {
    int y = int(WPOS.y);
    int i = y / plane_rows;                      // this fragment's plane
    float r = texRECT(R, WPOS);
    if (i < j) {
        result = r;
        return;
    }
    float yj = texelFetch(R, ivec2(int(WPOS.x), y + (j - i) * plane_rows), 0).r
             / texelFetch(C, ivec2(j, j), 0).r;
    result = (i == j) ? yj : r - texelFetch(C, ivec2(j, i), 0).r * yj;
}
