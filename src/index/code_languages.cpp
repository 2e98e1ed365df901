// Declaration rules per language for the code chunker. TypeScript/JavaScript know ES modules,
// CommonJS (module.exports, X.prototype.y = function) and TypeScript declarations; Python,
// Go, Rust, Java, C, C++, C#, Ruby and PHP claim their functions, types and classes (impl blocks
// for Rust), and their class members are split per method when a class is over the cap.
// Namespaces (and C's extern "C" blocks and #if groups) are flattened: their members are chunked
// one by one.
#include "index/code_languages.h"

#include <cctype>
#include <cstring>
#include <initializer_list>

extern "C" {
const TSLanguage* tree_sitter_typescript(void);
const TSLanguage* tree_sitter_tsx(void);
const TSLanguage* tree_sitter_javascript(void);
const TSLanguage* tree_sitter_python(void);
const TSLanguage* tree_sitter_go(void);
const TSLanguage* tree_sitter_rust(void);
const TSLanguage* tree_sitter_java(void);
const TSLanguage* tree_sitter_c(void);
const TSLanguage* tree_sitter_cpp(void);
const TSLanguage* tree_sitter_c_sharp(void);
const TSLanguage* tree_sitter_ruby(void);
const TSLanguage* tree_sitter_php(void);
}

namespace pf {
namespace {

bool one_of(TSNode n, std::initializer_list<const char*> types) {
  for (const char* t : types)
    if (is(n, t)) return true;
  return false;
}

// A row of a language's declaration table: nodes of these types are chunks of this kind, named by
// their "name" field, which is also recorded as the chunk's function or class name when `names`
// says so.
enum class Names { kSymbolOnly, kFunction, kClass };
struct DeclRule {
  const char* kind;
  Names names;
  std::initializer_list<const char*> types;
};

bool classify_by_table(TSNode n, std::string_view text, TSNode* decl, Meta* m,
                       std::initializer_list<DeclRule> rules) {
  *decl = n;
  for (const DeclRule& rule : rules) {
    if (!one_of(n, rule.types)) continue;
    m->type = rule.kind;
    m->sym = name_of(n, text);
    if (rule.names == Names::kFunction) m->fn = m->sym;
    if (rule.names == Names::kClass) m->cls = m->sym;
    return true;
  }
  return false;
}

// --- TypeScript, TSX, JavaScript -----------------------------------------------------------

bool classify_js(TSNode n, std::string_view text, bool exported, TSNode* decl, Meta* m) {
  const char* t = ts_node_type(n);
  *decl = n;
  if (!strcmp(t, "export_statement")) {
    TSNode d = field(n, "declaration");
    if (ts_node_is_null(d)) d = field(n, "value");
    if (ts_node_is_null(d)) return false;
    TSNode inner;
    if (!classify_js(d, text, true, &inner, m)) {
      // export default <expression>: the module's main value.
      m->type = "module";
      m->sym = "default";
      *decl = d;
      return true;
    }
    *decl = inner;
    return true;
  }
  if (!strcmp(t, "function_declaration") || !strcmp(t, "generator_function_declaration") ||
      !strcmp(t, "function_signature") || !strcmp(t, "function_expression") ||
      !strcmp(t, "generator_function")) {
    m->type = "function";
    m->fn = m->sym = name_of(n, text);
    return true;
  }
  if (!strcmp(t, "class_declaration") || !strcmp(t, "abstract_class_declaration") ||
      !strcmp(t, "class")) {
    m->type = "class";
    m->cls = m->sym = name_of(n, text);
    return true;
  }
  if (!strcmp(t, "interface_declaration") || !strcmp(t, "type_alias_declaration") ||
      !strcmp(t, "enum_declaration")) {
    m->type = "type";
    m->sym = name_of(n, text);
    return true;
  }
  if (!strcmp(t, "internal_module") || !strcmp(t, "module")) {
    m->type = "module";
    m->sym = name_of(n, text);
    return true;
  }
  if (!strcmp(t, "ambient_declaration")) {
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
      TSNode inner;
      if (classify_js(ts_node_named_child(n, i), text, true, &inner, m)) {
        *decl = n;
        return true;
      }
    }
    m->type = "module";
    return true;
  }
  if (!strcmp(t, "lexical_declaration") || !strcmp(t, "variable_declaration")) {
    TSNode d = ts_node_named_child(n, 0);
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
      if (is(ts_node_named_child(n, i), "variable_declarator")) {
        d = ts_node_named_child(n, i);
        break;
      }
    }
    if (ts_node_is_null(d) || !is(d, "variable_declarator")) return false;
    std::string name = name_of(d, text);
    TSNode v = field(d, "value");
    if (!ts_node_is_null(v)) {
      if (is(v, "arrow_function") || is(v, "function_expression") || is(v, "function") ||
          is(v, "generator_function")) {
        m->type = "function";
        m->fn = m->sym = name;
        return true;
      }
      if (is(v, "class")) {
        m->type = "class";
        m->cls = m->sym = name;
        return true;
      }
    }
    // Constants: claimed when exported, or when they hold a sizeable value (tables, maps).
    bool sizeable = !ts_node_is_null(v) && last_row(v) - first_row(v) >= 4;
    if (exported || sizeable) {
      m->type = "module";
      m->sym = name;
      return true;
    }
    return false;
  }
  if (!strcmp(t, "expression_statement")) {
    TSNode e = ts_node_named_child(n, 0);
    if (ts_node_is_null(e) || !is(e, "assignment_expression")) return false;
    TSNode left = field(e, "left");
    TSNode right = field(e, "right");
    if (ts_node_is_null(left) || ts_node_is_null(right) || !is(left, "member_expression"))
      return false;
    std::string lhs = text_of(left, text);
    TSNode prop = field(left, "property");
    std::string prop_name = ts_node_is_null(prop) ? std::string() : text_of(prop, text);
    bool fn =
        is(right, "function_expression") || is(right, "arrow_function") || is(right, "function");
    if (lhs == "module.exports") {
      m->type = fn ? "function" : is(right, "class") ? "class" : "module";
      m->sym = "module.exports";
      if (fn) m->fn = name_of(right, text);
      if (is(right, "class")) m->cls = name_of(right, text);
      *decl = right;
      return true;
    }
    if (fn) {
      size_t proto = lhs.find(".prototype.");
      m->type = proto != std::string::npos ? "method" : "function";
      if (proto != std::string::npos) m->cls = lhs.substr(0, proto);
      m->fn = m->sym = prop_name;
      *decl = right;
      return true;
    }
    return false;
  }
  return false;
}

bool classify_ts(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  return classify_js(n, text, false, decl, m);
}

bool is_method_ts(TSNode n) {
  return one_of(n, {"method_definition", "method_signature", "abstract_method_signature",
                    "class_static_block"});
}

// --- Python --------------------------------------------------------------------------------

bool classify_python(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  *decl = n;
  TSNode def = is(n, "decorated_definition") ? field(n, "definition") : n;
  if (ts_node_is_null(def)) return false;
  if (is(def, "function_definition")) {
    m->type = "function";
    m->fn = m->sym = name_of(def, text);
    return true;
  }
  if (is(def, "class_definition")) {
    m->type = "class";
    m->cls = m->sym = name_of(def, text);
    *decl = def;  // its body holds the members
    return true;
  }
  return false;
}

bool is_method_python(TSNode n) {
  return one_of(n, {"function_definition", "decorated_definition"});
}

// --- Go ------------------------------------------------------------------------------------

// The receiver's type name: "(s *Server)" -> "Server".
std::string receiver_type(TSNode method, std::string_view text) {
  std::string r = text_of(field(method, "receiver"), text);
  std::string name;
  for (size_t i = r.size(); i-- > 0;) {
    char c = r[i];
    bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (word)
      name.insert(name.begin(), c);
    else if (!name.empty())
      break;
  }
  return name;
}

bool classify_go(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  *decl = n;
  if (is(n, "function_declaration")) {
    m->type = "function";
    m->fn = m->sym = name_of(n, text);
    return true;
  }
  if (is(n, "method_declaration")) {
    m->type = "method";
    m->fn = m->sym = name_of(n, text);
    m->cls = receiver_type(n, text);
    return true;
  }
  if (is(n, "type_declaration")) {
    m->type = "type";
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
      TSNode spec = ts_node_named_child(n, i);
      if (is(spec, "type_spec") || is(spec, "type_alias")) {
        m->sym = name_of(spec, text);
        break;
      }
    }
    return true;
  }
  if (one_of(n, {"const_declaration", "var_declaration"}) && last_row(n) - first_row(n) >= 4) {
    m->type = "module";
    return true;
  }
  return false;
}

bool is_method_none(TSNode) {
  return false;
}

// --- Rust ----------------------------------------------------------------------------------

bool classify_rust(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  if (is(n, "impl_item")) {
    // impl Trait for Type / impl Type: the methods belong to Type.
    *decl = n;
    m->type = "class";
    m->cls = m->sym = text_of(field(n, "type"), text);
    return true;
  }
  return classify_by_table(
      n, text, decl, m,
      {{"function",
        Names::kFunction,
        {"function_item", "function_signature_item", "macro_definition"}},
       {"type", Names::kSymbolOnly, {"struct_item", "enum_item", "union_item", "type_item"}},
       {"class", Names::kClass, {"trait_item"}},
       {"module", Names::kSymbolOnly, {"mod_item", "const_item", "static_item"}}});
}

bool is_method_rust(TSNode n) {
  return one_of(n, {"function_item", "function_signature_item"});
}

// --- Java ----------------------------------------------------------------------------------

bool classify_java(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  return classify_by_table(
      n, text, decl, m,
      {{"class", Names::kClass, {"class_declaration", "record_declaration", "enum_declaration"}},
       {"type", Names::kClass, {"interface_declaration", "annotation_type_declaration"}}});
}

bool is_method_java(TSNode n) {
  return one_of(
      n, {"method_declaration", "constructor_declaration", "compact_constructor_declaration"});
}

// --- C and C++ ----------------------------------------------------------------------------

// "Box<T>" -> "Box": a method defined out of line names its class with template arguments.
std::string without_template_args(std::string name) {
  size_t lt = name.find('<');
  return lt == std::string::npos ? name : name.substr(0, lt);
}

bool classify_c_family(TSNode n, std::string_view text, bool cpp, TSNode* decl, Meta* m) {
  *decl = n;
  if (is(n, "template_declaration")) {
    // template <...> followed by the real declaration: the chunk keeps the template line.
    for (uint32_t i = ts_node_named_child_count(n); i-- > 0;) {
      TSNode inner = ts_node_named_child(n, i);
      if (is(inner, "template_parameter_list")) break;
      TSNode inner_decl;
      if (classify_c_family(inner, text, cpp, &inner_decl, m)) {
        *decl = inner_decl;
        return true;
      }
    }
    return false;
  }
  if (is(n, "function_definition")) {
    std::string scope;
    m->fn = m->sym = declarator_name(field(n, "declarator"), text, &scope);
    m->type = scope.empty() ? "function" : "method";
    m->cls = without_template_args(scope);
    return true;
  }
  if (is(n, "preproc_function_def")) {
    m->type = "function";
    m->fn = m->sym = name_of(n, text);
    return true;
  }
  const bool has_body = !ts_node_is_null(field(n, "body"));
  if (is(n, "class_specifier") && has_body) {
    m->type = "class";
    m->cls = m->sym = name_of(n, text);
    return true;
  }
  if (one_of(n, {"struct_specifier", "union_specifier"}) && has_body) {
    // A C++ struct is a class (it may have methods); a C struct is a type.
    m->type = cpp ? "class" : "type";
    m->sym = name_of(n, text);
    if (cpp) m->cls = m->sym;
    return true;
  }
  if (is(n, "enum_specifier") && has_body) {
    m->type = "type";
    m->sym = name_of(n, text);
    return true;
  }
  if (one_of(n, {"type_definition", "alias_declaration", "concept_definition"})) {
    m->type = "type";
    m->sym = name_of(n, text);
    return true;
  }
  if (is(n, "namespace_definition")) {  // an empty one, or one the chunker did not flatten
    m->type = "module";
    m->sym = name_of(n, text);
    return true;
  }
  // A large table or initialised object: a chunk of its own, like Go's var blocks.
  if (is(n, "declaration") && last_row(n) - first_row(n) >= 4) {
    m->type = "module";
    m->sym = name_of(n, text);
    return true;
  }
  return false;
}

bool classify_c(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  return classify_c_family(n, text, false, decl, m);
}

bool classify_cpp(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  return classify_c_family(n, text, true, decl, m);
}

bool is_method_cpp(TSNode n) {
  return one_of(n, {"function_definition", "template_declaration"});
}

TSNode c_family_members(TSNode n) {
  if (one_of(n, {"namespace_definition", "linkage_specification"})) {
    TSNode body = field(n, "body");
    if (!ts_node_is_null(body) && is(body, "declaration_list")) return body;
    return {};
  }
  if (one_of(n, {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"}))
    return n;
  return {};
}

// --- C# ------------------------------------------------------------------------------------

bool classify_csharp(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  return classify_by_table(
      n, text, decl, m,
      {{"class", Names::kClass, {"class_declaration", "record_declaration", "struct_declaration"}},
       {"type", Names::kClass, {"interface_declaration"}},
       {"type", Names::kSymbolOnly, {"enum_declaration", "delegate_declaration"}}});
}

bool is_method_csharp(TSNode n) {
  return one_of(n, {"method_declaration", "constructor_declaration", "destructor_declaration",
                    "operator_declaration", "conversion_operator_declaration",
                    "property_declaration", "indexer_declaration", "event_declaration"});
}

// A braced namespace; a file-scoped one ("namespace A.B;") already leaves its types at the top.
TSNode csharp_members(TSNode n) {
  return is(n, "namespace_declaration") ? field(n, "body") : TSNode{};
}

// --- Ruby ----------------------------------------------------------------------------------

// A module that holds only methods is a mixin: a class for chunking. One that holds classes or
// modules is a namespace and is flattened by ruby_members instead.
bool classify_ruby(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  return classify_by_table(n, text, decl, m,
                           {{"function", Names::kFunction, {"method", "singleton_method"}},
                            {"class", Names::kClass, {"class", "module"}}});
}

bool is_method_ruby(TSNode n) {
  return one_of(n, {"method", "singleton_method"});
}

TSNode ruby_members(TSNode n) {
  if (!is(n, "module")) return {};
  TSNode body = field(n, "body");
  if (ts_node_is_null(body)) return {};
  for (uint32_t i = 0; i < ts_node_named_child_count(body); ++i)
    if (one_of(ts_node_named_child(body, i), {"class", "module"})) return body;
  return {};
}

// --- PHP -----------------------------------------------------------------------------------

bool classify_php(TSNode n, std::string_view text, TSNode* decl, Meta* m) {
  return classify_by_table(
      n, text, decl, m,
      {{"function", Names::kFunction, {"function_definition"}},
       {"class", Names::kClass, {"class_declaration", "trait_declaration", "enum_declaration"}},
       {"type", Names::kClass, {"interface_declaration"}}});
}

bool is_method_php(TSNode n) {
  return is(n, "method_declaration");
}

// "namespace A { ... }"; "namespace A;" leaves what follows at the top level.
TSNode php_members(TSNode n) {
  return is(n, "namespace_definition") ? field(n, "body") : TSNode{};
}

}  // namespace

const CodeLanguage* code_language(const std::string& language) {
  static const CodeLanguage ts{tree_sitter_typescript, classify_ts, is_method_ts, nullptr};
  static const CodeLanguage tsx{tree_sitter_tsx, classify_ts, is_method_ts, nullptr};
  static const CodeLanguage js{tree_sitter_javascript, classify_ts, is_method_ts, nullptr};
  static const CodeLanguage python{tree_sitter_python, classify_python, is_method_python, nullptr};
  static const CodeLanguage go{tree_sitter_go, classify_go, is_method_none, nullptr};
  static const CodeLanguage rust{tree_sitter_rust, classify_rust, is_method_rust, nullptr};
  static const CodeLanguage java{tree_sitter_java, classify_java, is_method_java, nullptr};
  static const CodeLanguage c{tree_sitter_c, classify_c, is_method_cpp, c_family_members, true};
  static const CodeLanguage cpp{tree_sitter_cpp, classify_cpp, is_method_cpp, c_family_members};
  static const CodeLanguage csharp{tree_sitter_c_sharp, classify_csharp, is_method_csharp,
                                   csharp_members};
  static const CodeLanguage ruby{tree_sitter_ruby, classify_ruby, is_method_ruby, ruby_members};
  static const CodeLanguage php{tree_sitter_php, classify_php, is_method_php, php_members};
  if (language == "typescript") return &ts;
  if (language == "tsx") return &tsx;
  if (language == "javascript") return &js;
  if (language == "python") return &python;
  if (language == "go") return &go;
  if (language == "rust") return &rust;
  if (language == "java") return &java;
  if (language == "c") return &c;
  if (language == "cpp") return &cpp;
  if (language == "csharp") return &csharp;
  if (language == "ruby") return &ruby;
  if (language == "php") return &php;
  return nullptr;
}

}  // namespace pf
