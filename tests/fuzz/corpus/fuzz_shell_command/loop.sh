for f in $(find . -name "*.ts"); do sed -i "s/a/b/" "$f"; done; echo $((1+2)) <<EOF
