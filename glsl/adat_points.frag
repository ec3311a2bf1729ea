// The fragment half of A D^2 A^T by points (adat_points.vert): the point's contribution
// a(i,k) a(j,k) d(k), which additive blending adds into texel (j, i) of C (beyond the papers:
// 001's Algorithm 3, column scaling and outer product addition, over the non-zeros only).
flat in float contribution;
out float result;

void main() {
    result = contribution;
}
