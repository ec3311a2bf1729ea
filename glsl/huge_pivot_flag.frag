// Counting the pivots the safeguarded square root replaced: fragment k reads L(k, k) (at T0)
// and returns 1 if it is the square root of the huge replacement value, else 0; a sum
// reduction counts them.
uniform sampler2D L;
uniform float threshold;
out float result;

void main() {
    result = texRECT(L, T0.xy) >= threshold ? 1.0 : 0.0;
}
