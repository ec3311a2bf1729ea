// The fragment half of FSATY by scattering (sparse_scatter.vert): the point's contribution
// a(i, k) y(i), which additive blending adds into texel j of x.
flat in float contribution;
out float result;

void main() {
    result = contribution;
}
