// Kernel 1 of paper 001 (column scaling): b(i) = A(i, k) d(k). The rectangle of Fig. 2(a)
// carries the triad (x, k + .5, .5); its swizzle .yx fetches A at (k + .5, i + .5) and .yz
// fetches d at (k + .5, .5).
uniform sampler2D A;
uniform sampler2D d;
out float result;

void main() {
    vec3 index = T0;
    result = texRECT(A, index.yx) * texRECT(d, index.yz);
}
