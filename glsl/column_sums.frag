// Beyond the papers: y_i = sum over c = 0 .. rows-1 of P(c, i), each fragment of the 1 x m
// result adding its column of P (the partial sums of triangular_product_chunks), in order.
uniform sampler2D P;
uniform int rows;
out float result;

void main() {
    int i = int(WPOS.x);
    float sum = 0.0;
    for (int c = 0; c < rows; c++)
        sum += texelFetch(P, ivec2(i, c), 0).r;
    result = sum;
}
