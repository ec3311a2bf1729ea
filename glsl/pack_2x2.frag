// Beyond the papers (issue 13, blocked Cholesky): pack an n x n R32F matrix into an RGBA32F
// texture of 2 x 2 blocks. Texel (X, Y) holds rows 2Y, 2Y+1 and columns 2X, 2X+1 as
// (a(2Y, 2X), a(2Y, 2X+1), a(2Y+1, 2X), a(2Y+1, 2X+1)). Indexes at or past n are the identity's,
// so the padded matrix is diag(A, I), whose Cholesky factor is diag(L, I).
uniform sampler2D A;
uniform int n;
out vec4 result;

float entry(int r, int c) {
    if (r < n && c < n) return texelFetch(A, ivec2(c, r), 0).r;
    return r == c ? 1.0 : 0.0;
}

void main() {
    ivec2 b = ivec2(floor(WPOS)) * 2;        // (column, row) of the block's first element
    result = vec4(entry(b.y, b.x), entry(b.y, b.x + 1), entry(b.y + 1, b.x), entry(b.y + 1, b.x + 1));
}
