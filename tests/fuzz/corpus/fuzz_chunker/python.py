class A(B):
    @d
    def f(self):
        return 1
