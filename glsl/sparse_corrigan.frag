// Sparse matrix-vector product of paper 003 (Figs. 4-6): only the non-zeros are stored, row
// after row (Fig. 4, values; Fig. 5, their columns), and "the number of nonzero entries is
// hard coded into each fragment program": this file is the template, NNZ is #defined per
// program (one program per non-zero count). One rectangle covers a group of consecutive rows
// with NNZ non-zeros; T0.x is interpolated to the row's index within its group, so the row's
// first non-zero is at first + row * NNZ of the storage, a texture `store_width` wide.
uniform sampler2D values;
uniform sampler2D columns;
uniform sampler2D X;
uniform int first;         // storage index of the group's first non-zero
uniform int store_width;
uniform int x_width;
out float result;

void main() {
    int start = first + int(floor(T0.x)) * NNZ;
    float sum = 0.0;
    for (int k = 0; k < NNZ; ++k) {
        int p = start + k;
        ivec2 entry = ivec2(p % store_width, p / store_width);
        sum += texelFetch(values, entry, 0).r * texVECTOR(X, texelFetch(columns, entry, 0).r, x_width);
    }
    result = sum;
}
